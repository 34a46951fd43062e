#include "xwires/api/search_run.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw {
namespace {

bool HasTrainOverrides(const SearchRequest& r) {
  return !r.arch.empty() || !r.profiles.empty() || !r.data.empty() || r.train_limit ||
         r.test_limit || r.width || !r.init_weights.empty();
}

// The command's --arch, --profiles, --data, --train-limit, --test-limit and
// --width written over the config's keys of the same names, then parsed and
// checked as a config document is (so a bad value is refused exactly as in a
// config file), the error naming the options.
Result<hpo::DriverConfig> ApplyTrainOverrides(const hpo::DriverConfig& base,
                                              const SearchRequest& r) {
  nlohmann::json doc = nlohmann::json::parse(hpo::DriverConfigToJson(base));
  std::string given;
  auto note = [&given](const std::string& flag) { given += (given.empty() ? "" : ", ") + flag; };
  if (!r.arch.empty()) {
    doc["arch"] = r.arch;
    note("--arch");
  }
  if (!r.profiles.empty()) {
    if (r.profiles.size() != 2) {
      return Status::InvalidArgument("--profiles: a search compares exactly two profiles, got " +
                                     std::to_string(r.profiles.size()));
    }
    doc["profiles"] = r.profiles;
    note("--profiles");
  }
  if (!r.data.empty()) {
    doc["data"]["spec"] = r.data;
    note("--data");
  }
  if (r.train_limit) {
    doc["data"]["train_limit"] = *r.train_limit;
    note("--train-limit");
  }
  if (r.test_limit) {
    doc["data"]["test_limit"] = *r.test_limit;
    note("--test-limit");
  }
  if (r.width) {
    for (const hpo::Dimension& d : base.search.space.dims()) {
      if (d.name == "width") {
        return Status::InvalidArgument(
            "--width: width is a search dimension of this config; set the dimension's "
            "low and high instead");
      }
    }
    doc["train"]["width"] = *r.width;
    note("--width");
  }
  if (!r.init_weights.empty()) {
    doc["train"]["init_weights"] = r.init_weights;
    note("--init-weights");
  }
  auto parsed = hpo::ParseDriverConfigJson(doc.dump());
  if (!parsed.ok()) return parsed.status().WithContext(given);
  return parsed;
}

}  // namespace

Result<hpo::DriverConfig> SearchConfigOf(const SearchRequest& r) {
  hpo::DriverConfig config = hpo::DefaultDriverConfig();
  if (r.resume > 0) {
    if (!r.config_file.empty() || !r.config_json.empty() || r.seed || r.no_subspaces ||
        !r.objective.empty() || HasTrainOverrides(r)) {
      return Status::InvalidArgument(
          "--resume continues a stored search: --config, --seed, "
          "--no-subspaces, --objective, --arch, --profiles, --data, "
          "--train-limit, --test-limit, --width and --init-weights "
          "cannot change it (budget options can)");
    }
    return config;
  }
  if (!r.config_file.empty()) {
    XW_ASSIGN_OR_RETURN(config, hpo::LoadDriverConfig(r.config_file));
  } else if (!r.config_json.empty()) {
    XW_ASSIGN_OR_RETURN(config, hpo::ParseDriverConfigJson(r.config_json));
  }
  if (HasTrainOverrides(r)) {
    XW_ASSIGN_OR_RETURN(config, ApplyTrainOverrides(config, r));
  }
  if (r.seed) config.search.optimizer.seed = static_cast<uint64_t>(*r.seed);
  if (r.no_subspaces) config.search.no_subspaces = true;
  if (!r.objective.empty()) {
    XW_ASSIGN_OR_RETURN(config.search.objective, hpo::ParseObjective(r.objective));
  }
  return config;
}

Result<hpo::DriverOptions> SearchOptionsOf(const SearchRequest& r) {
  hpo::DriverOptions o;
  o.dataset_dir = r.dataset;
  if (r.resume != 0) o.resume_id = r.resume;
  o.trials_per_subspace = r.trials_per_subspace;
  o.max_trials = r.max_trials;
  o.max_seconds = r.max_seconds;
  o.jobs = r.jobs;
  o.threads = r.threads;
  o.best_excludes_degenerate = r.exclude_degenerate;
  if (r.trials_per_subspace < 0) {
    return Status::InvalidArgument("--trials-per-subspace must be >= 1");
  }
  return o;
}

Result<Table> SearchTopTable(const std::string& dir, int64_t search_id, int top,
                             bool exclude_degenerate) {
  XW_ASSIGN_OR_RETURN(auto ds, Dataset::Open(dir, OpenMode::kReadOnly));
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, ds->Searches());
  hpo::DriverConfig config;
  for (const SearchRow& s : searches) {
    if (s.id == search_id) {
      XW_ASSIGN_OR_RETURN(config, hpo::ParseDriverConfigJson(s.record.config_json));
    }
  }
  TrialQuery q;
  q.where = "search_id = " + std::to_string(search_id) + " and diff >= 0";
  q.order_by = {"-diff", "id"};
  q.limit = top;
  q.exclude_degenerate = exclude_degenerate;
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, ds->Query(q));
  Table t;
  t.columns = {"trial"};
  for (const hpo::Dimension& d : config.search.space.dims()) t.columns.push_back(d.name);
  for (const std::string& p : config.search.profiles) t.columns.push_back("acc_" + p);
  t.columns.push_back(hpo::ObjectiveName(config.search.objective));
  t.columns.insert(t.columns.end(), {"collapsed", "at_chance"});
  for (const TrialRow& r : rows) {
    std::vector<Cell> row = {r.id};
    auto h = nlohmann::json::parse(r.hparams_json, nullptr, false);
    for (const hpo::Dimension& d : config.search.space.dims()) {
      if (!h.is_object() || !h.contains(d.name) || !h[d.name].is_number()) {
        row.push_back(std::monostate{});
      } else if (d.type == hpo::DimType::kInteger) {
        row.push_back(h[d.name].get<int64_t>());
      } else {
        row.push_back(h[d.name].get<double>());
      }
    }
    for (const std::string& p : config.search.profiles) {
      const ModelRow* m = r.Model(p);
      row.push_back(m != nullptr ? Cell(m->test_acc) : Cell(std::monostate{}));
    }
    row.push_back(r.divergence);
    const ModelFlags f = TrialFlags(DegenerateFlags(r));
    for (int v : {f.collapsed, f.at_chance})
      row.push_back(v < 0 ? Cell(std::monostate{}) : Cell(int64_t{v}));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace xw
