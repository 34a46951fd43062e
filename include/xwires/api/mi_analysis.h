// Mutual information between a dataset's hyperparameters and its trials'
// divergence (`xwires mi`, the report's MI bars), per architecture.
//
// Variables: the typed hyperparameter columns lr, adam_eps, beta1, beta2,
// weight_decay, batch_size, epochs that take more than one known value in
// the group (constants carry no information), each alone and every pair of
// them. A variable set uses the trials where all its values and the
// divergence are known. Estimation: mutual_info.h (normalised, digitized
// into 0.1 bins or KSG, repeated with jitter).
//
// Read-only; thread-safety as Dataset.
#ifndef XWIRES_API_MI_ANALYSIS_H_
#define XWIRES_API_MI_ANALYSIS_H_

#include <string>
#include <vector>

#include "xwires/api/mutual_info.h"
#include "xwires/core/status.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

struct MiAnalysisOptions {
  std::vector<std::string> archs;  // only these architectures ("" = every one)
  std::string where;               // filter language of query.h
  bool pairs = true;               // also every pair of variables
  // log10 of lr, adam_eps and weight_decay before normalising (our searches
  // draw them log-uniformly; the study normalised raw values: off).
  bool log_scale = false;
  MiOptions mi;
};

struct MiRow {
  std::string group;     // architecture, or "all" over every architecture
  std::string variable;  // "lr", or "lr+adam_eps" for a pair
  MiEstimate estimate;
};

// One group per architecture, plus "all" when there are several. Rows of a
// group: single variables in column order, then pairs. InvalidArgument for a
// bad filter or options; NotFound if no trial has a known divergence.
// `trial_ids`, if given, receives the trials the estimate was computed over
// (those matching with a known divergence), ascending: what a stored
// result describes (`mi --store`).
Result<std::vector<MiRow>> ComputeDatasetMi(
    const Dataset& ds, const MiAnalysisOptions& opt,
    std::vector<int64_t>* trial_ids = nullptr);

// Columns: group, variable, mi_mean, mi_std, n.
Table MiTable(const std::vector<MiRow>& rows);

// The stored form of a result: {"estimator", "repeats", "jitter", "k",
// "seed", "log_scale", "pairs", "archs", "where", "rows": [{"group",
// "variable", "mi_mean", "mi_std", "n"}, ...]} (a JSON object), and a
// one-line summary naming each group's most informative single variable.
std::string MiResultJson(const std::vector<MiRow>& rows,
                         const MiAnalysisOptions& opt);
std::string MiSummary(const std::vector<MiRow>& rows,
                      const MiAnalysisOptions& opt);

// Names of the hyperparameter columns considered, in order.
const std::vector<std::string>& MiVariableNames();

// Value of hyperparameter column `name` (one of MiVariableNames()) of a
// trial; NaN if unknown (or, with log_scale, log10 of it for lr, adam_eps and
// weight_decay; NaN if not positive).
double TrialVariable(const TrialRow& t, const std::string& name,
                     bool log_scale = false);

}  // namespace xw

#endif  // XWIRES_API_MI_ANALYSIS_H_
