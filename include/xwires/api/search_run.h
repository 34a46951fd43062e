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
// both profiles, the objective's name, collapsed and at_chance
// (degenerate.h). exclude_degenerate leaves out trials with a collapsed or
// at-chance model.
Result<Table> SearchTopTable(const std::string& dir, int64_t search_id, int top,
                             bool exclude_degenerate = false);

}  // namespace xw

#endif  // XWIRES_API_SEARCH_RUN_H_
