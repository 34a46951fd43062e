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
};

// The driver configuration: DefaultDriverConfig() overlaid with the config
// file or text, then the seed, subspace and objective overrides. A resumed
// search keeps its stored configuration, so those options are refused with it.
Result<hpo::DriverConfig> SearchConfigOf(const SearchRequest& r);

// The driver options of the request (dataset, resume id, budget, jobs,
// threads); callbacks are left to the caller.
Result<hpo::DriverOptions> SearchOptionsOf(const SearchRequest& r);

// The `top` most divergent finished pairs of search `search_id` of the
// dataset in `dir`: columns trial, the searched dimensions, acc_<profile> of
// both profiles, and the objective's name.
Result<Table> SearchTopTable(const std::string& dir, int64_t search_id, int top);

}  // namespace xw

#endif  // XWIRES_API_SEARCH_RUN_H_
