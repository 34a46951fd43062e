// A divergence search as `xwires search` sets it up, callable from the CLI
// and the Python package alike: the driver configuration from a config file
// or JSON text plus the command's overrides, the driver options, and the
// table of a search's most divergent pairs that the command ends with.
//
// Plain functions; thread-safe with respect to distinct datasets.
#ifndef XWIRES_API_SEARCH_RUN_H_
#define XWIRES_API_SEARCH_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/hpo/search_driver.h"

namespace xw {

// What `xwires search` takes; defaults are the CLI's (every 0 means "the
// config's" or "automatic").
struct SearchRequest {
  std::string config_file;  // search config JSON file ("": the default search)
  std::string config_json;  // or its text (used when config_file is "")
  std::string dataset = "xwires-data";
  std::string objective;  // overrides the config's ("": keep)
  int64_t resume = 0;     // continue this search of the dataset (0: a new one)
  int64_t max_trials = 0;
  int trials_per_subspace = 0, jobs = 0, threads = 0;
  double max_seconds = 0;
  std::optional<int64_t> seed;  // overrides the config's optimizer seed
  bool no_subspaces = false;
  // The best pair and the final table skip trials with a collapsed or
  // at-chance model (DriverOptions::best_excludes_degenerate).
  bool exclude_degenerate = false;
  // What to train, over the config's keys of the same names ("" / empty /
  // nullopt: keep the config's): "arch", "profiles" (exactly two), "data"
  // ("data.spec"), "data.train_limit", "data.test_limit", "train.width"
  // (refused when width is a search dimension of the config) and
  // "train.init_weights".
  std::string arch;
  std::vector<std::string> profiles;
  std::string data;
  std::optional<int64_t> train_limit, test_limit;
  std::optional<double> width;
  std::string init_weights;  // "train.init_weights" ("": keep the config's)
  // The two-stage schedule (the config's "schedule" keys, hpo/schedule.h;
  // "" / nullopt: keep the config's): --schedule, --replicas, --top-share,
  // --round, --confirm-top, --confirm-replicas.
  std::string schedule;
  std::optional<int64_t> replicas, round, confirm_top, confirm_replicas;
  std::optional<double> top_share;
};

// The driver configuration: DefaultDriverConfig() overlaid with the config
// file or text, then the arch, profiles, data and width overrides (validated
// as the config's keys are, errors naming the option), then the seed,
// subspace and objective overrides. A resumed search keeps its stored
// configuration, so those options are refused with it.
Result<hpo::DriverConfig> SearchConfigOf(const SearchRequest& r);

// The driver options of the request (dataset, resume id, budget, jobs,
// threads); callbacks are left to the caller.
Result<hpo::DriverOptions> SearchOptionsOf(const SearchRequest& r);

// The `top` most divergent finished pairs of search `search_id` of the
// dataset in `dir`: columns trial, the searched dimensions, acc_<profile> of
// both profiles, and the objective's name. For a two-stage search
// (objective significant_diff) the column is `diff` (K = 1) and the
// replicated pairs come first, by the lower confidence bound of their
// latest statistics (the confirmation's, once confirmed), with columns
// stage (confirmed | replicated | screened), k (replicas a side),
// mean_diff, diff_lcb, p_value, p_bh (Benjamini-Hochberg adjusted over the
// search's replicated pairs), bh (rejected at the schedule's fdr_q) and
// verdict; screened pairs follow by diff. Then collapsed and at_chance
// (degenerate.h); exclude_degenerate leaves out trials with a collapsed or
// at-chance model.
Result<Table> SearchTopTable(const std::string& dir, int64_t search_id, int top,
                             bool exclude_degenerate = false);

// What a two-stage search found: replicated and confirmed pairs, how many of
// them are `significant`, and how many BH rejects at q.
struct SearchVerdicts {
  int64_t replicated = 0, confirmed = 0, significant = 0, bh_rejected = 0;
  double q = 0.10;
};
Result<SearchVerdicts> SearchVerdictSummary(const std::string& dir, int64_t search_id);

// One row per search of `ds` (`xwires searches`): id, created_at, status
// (running, done, stopped, interrupted, failed), what it trains (arch,
// profiles "a,b", data, train_limit and test_limit: null for the whole
// split, width), its objective, its trials by state (done, failed, pending)
// and planned (the budget it was started with: subspaces x
// trials_per_subspace, at most max_trials), and its best finished pair
// (best_trial, best_diff: the largest objective). Config columns are null
// for a config this build cannot read. `with_config` appends the stored
// config_json and space_json.
Result<Table> SearchesTable(const Dataset& ds, bool with_config = false);

}  // namespace xw

#endif  // XWIRES_API_SEARCH_RUN_H_
