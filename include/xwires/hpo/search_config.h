// The divergence-search configuration: a JSON document naming the search
// space, the pair of numerics profiles to compare, the data, the objective and
// the budget, plus the optimizer's knobs. Every key is optional (defaults
// below); unknown keys, wrong types and out-of-range values are rejected with
// an InvalidArgument naming the key path (e.g. "dimensions[1].low").
//
//   {
//     "dimensions": [ {"name": "lr", "type": "real", "low": 1e-8,
//                      "high": 0.1, "log": true}, ... ],   // default: Table 1
//     "arch": "simple_cnn",
//     "profiles": ["torch", "tf"],
//     "data": "synthetic"            // or {"spec": "cifar10:DIR",
//                                    //     "train_limit": N, "test_limit": N}
//     "objective": "abs_acc_diff",   // | "disagreement" | "max_class_gap"
//                                    // | "significant_diff"
//     "budget": {"max_trials": 0, "max_seconds": 0},   // 0 = no limit
//     "trials_per_subspace": 25,
//     "no_subspaces": false,         // true: one GP over the whole space
//     "overlap": 0.5,                // HyperSpace phi in [0, 1]
//     "log_split": "log",            // | "linear" (see subspace.h)
//     "seed": 0,
//     "acquisition": "gp_hedge",     // | "EI" | "PI" | "LCB"
//     "xi": 0.01, "kappa": 1.96, "eta": 1.0,
//     "initial_design": "random",    // | "sobol" | "lhs"
//     "n_initial_points": 10,
//     "liar": "min",                 // | "mean" | "max"
//     "noise": "gaussian",           // fitted white noise, or a fixed variance
//     "n_candidates": 10000, "n_local_starts": 5,
//     "refit_every": 4, "refit_dense_until": 40, "restart_every": 40
//   }
//
// Objectives are measured on the test set by the search driver; the search
// maximises them (the optimizer is told -objective).
#ifndef XWIRES_HPO_SEARCH_CONFIG_H_
#define XWIRES_HPO_SEARCH_CONFIG_H_

#include <array>
#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/hpo/optimizer.h"
#include "xwires/hpo/space.h"
#include "xwires/hpo/subspace.h"

namespace xw::hpo {

enum class Objective {
  kAbsAccDiff,    // "abs_acc_diff": |accuracy_A - accuracy_B|
  kDisagreement,  // "disagreement": fraction of test samples predicted
                  // differently
  kMaxClassGap,   // "max_class_gap": max over classes of |class acc_A - class
                  // acc_B|
  // "significant_diff": the lower confidence bound max(0, |mean diff| -
  // t(0.975, df) SE) over K replicas a side (stats::LowerConfidenceBound,
  // docs/significance.md). A screened (K = 1) trial is scored, stored and
  // told to the GP with its |acc_A - acc_B|; a replicated one is re-told
  // with its LCB and SE^2 as that observation's noise variance (hpo/schedule.h).
  kSignificantDiff,
};
std::string ObjectiveName(Objective o);
Result<Objective> ParseObjective(const std::string& name);

struct SearchBudget {
  int64_t max_trials = 0;  // total over all subspaces; 0 = no limit
  double max_seconds = 0;  // wall clock; 0 = no limit
  bool operator==(const SearchBudget&) const = default;
};

struct SearchConfig {
  SearchSpace space = DefaultSearchSpace();
  std::string arch = "simple_cnn";
  std::array<std::string, 2> profiles = {"torch", "tf"};
  std::string data = "synthetic";  // a data spec for LoadDataSpec
  int64_t train_limit = -1;        // -1: the whole split
  int64_t test_limit = -1;
  Objective objective = Objective::kAbsAccDiff;
  SearchBudget budget;
  int trials_per_subspace = 25;
  bool no_subspaces = false;
  double overlap = kDefaultOverlap;
  LogSplit log_split = LogSplit::kLogSpace;
  // Optimizer knobs; optimizer.seed is the search seed (each subspace's
  // optimizer derives its own from it, see SubspaceOptions).
  OptimizerOptions optimizer;
};

// Parses and validates a config document (see the header comment).
Result<SearchConfig> ParseSearchConfigJson(const std::string& text);
// Reads and parses a file; NotFound / IOError name the path, parse errors
// are prefixed with it.
Result<SearchConfig> LoadSearchConfig(const std::string& path);
// Canonical JSON with every key; ParseSearchConfigJson(SearchConfigToJson(c))
// reproduces c.
std::string SearchConfigToJson(const SearchConfig& c);

// 2^D, or 1 with no_subspaces.
int NumSearchSubspaces(const SearchConfig& c);
// The space of subspace `index` (the whole space with no_subspaces).
Result<SearchSpace> SearchSubspace(const SearchConfig& c, int index);
// Optimizer options for subspace `index`: the configured ones with a seed
// mixed from (seed, index), so subspaces draw independent designs.
OptimizerOptions SubspaceOptions(const SearchConfig& c, int index);

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SEARCH_CONFIG_H_
