#include "xwires/api/search_run.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "xwires/core/significance.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw {
namespace {

bool HasScheduleOverrides(const SearchRequest& r) {
  return !r.schedule.empty() || r.replicas || r.round || r.confirm_top || r.confirm_replicas ||
         r.top_share;
}

bool HasTrainOverrides(const SearchRequest& r) {
  return !r.arch.empty() || !r.profiles.empty() || !r.data.empty() || r.train_limit ||
         r.test_limit || r.width || !r.init_weights.empty() || HasScheduleOverrides(r);
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
  if (!r.schedule.empty()) {
    doc["schedule"]["kind"] = r.schedule;
    note("--schedule");
  }
  const std::pair<const char*, const std::optional<int64_t>*> ints[] = {
      {"replicas", &r.replicas},
      {"round", &r.round},
      {"confirm_top", &r.confirm_top},
      {"confirm_replicas", &r.confirm_replicas}};
  for (const auto& [key, value] : ints) {
    if (!*value) continue;
    doc["schedule"][key] = **value;
    std::string flag = std::string("--") + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    note(flag);
  }
  if (r.top_share) {
    doc["schedule"]["top_share"] = *r.top_share;
    note("--top-share");
  }
  // The objective decides what "auto" means; apply it before validating.
  if (!r.objective.empty()) doc["objective"] = r.objective;
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
          "--train-limit, --test-limit, --width, --init-weights and the "
          "schedule options cannot change it (budget options can)");
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
  // A new search's budget options become part of its stored config: a
  // resume then finishes what was started, and `xwires searches` knows how
  // many trials were planned.
  if (r.trials_per_subspace > 0) config.search.trials_per_subspace = r.trials_per_subspace;
  if (r.max_trials > 0) config.search.budget.max_trials = r.max_trials;
  if (r.seed) config.search.optimizer.seed = static_cast<uint64_t>(*r.seed);
  if (r.no_subspaces) config.search.no_subspaces = true;
  if (!r.objective.empty()) {
    XW_ASSIGN_OR_RETURN(config.search.objective, hpo::ParseObjective(r.objective));
    XW_RETURN_IF_ERROR(hpo::ValidateSchedule(config.schedule, config.search.objective)
                           .WithContext("--objective"));
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

namespace {

// A search's stored configuration (the default one if it has none).
Result<hpo::DriverConfig> ConfigOfSearch(const Dataset& ds, int64_t search_id) {
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, ds.Searches());
  hpo::DriverConfig config;
  for (const SearchRow& s : searches) {
    if (s.id == search_id) {
      XW_ASSIGN_OR_RETURN(config, hpo::ParseDriverConfigJson(s.record.config_json));
    }
  }
  return config;
}

// The latest statistics of every replicated trial of a search, with the
// Benjamini-Hochberg adjustment over their permutation p-values.
struct Replicated {
  ReplicaStatsRecord stats;  // the latest row
  bool confirmed = false;
  double p_bh = 1;
  bool bh = false;
};

Result<std::map<int64_t, Replicated>> ReplicatedTrials(const Dataset& ds,
                                                      const hpo::DriverConfig& c,
                                                      const std::vector<TrialRow>& rows) {
  std::map<int64_t, Replicated> out;
  for (const TrialRow& r : rows) {
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> st, LoadReplicaStats(ds, r.id));
    if (st.empty()) continue;
    Replicated x;
    x.stats = st.back();
    // The latest row is the confirmation's when there is one (LoadReplicaStats
    // orders a trial's rows by first_replica, then id).
    x.confirmed = st.back().family == c.schedule.confirm_perturb &&
                  st.back().first_replica == hpo::ConfirmFirstReplica(c.schedule);
    out[r.id] = std::move(x);
  }
  std::vector<double> p;
  for (const auto& [id, x] : out) p.push_back(x.stats.stats.permutation_p);
  XW_ASSIGN_OR_RETURN(stats::BhResult bh, stats::BenjaminiHochberg(p, c.schedule.fdr_q));
  size_t i = 0;
  for (auto& [id, x] : out) {
    x.p_bh = bh.adjusted[i];
    x.bh = bh.reject[i] != 0;
    ++i;
  }
  return out;
}

Result<std::vector<TrialRow>> FinishedRows(const Dataset& ds, int64_t search_id) {
  TrialQuery q;
  q.where = "search_id = " + std::to_string(search_id) + " and diff >= 0";
  q.order_by = {"-diff", "id"};
  return ds.Query(q);
}

}  // namespace

Result<SearchVerdicts> SearchVerdictSummary(const std::string& dir, int64_t search_id) {
  XW_ASSIGN_OR_RETURN(auto ds, Dataset::Open(dir, OpenMode::kReadOnly));
  XW_ASSIGN_OR_RETURN(hpo::DriverConfig config, ConfigOfSearch(*ds, search_id));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, FinishedRows(*ds, search_id));
  XW_ASSIGN_OR_RETURN(auto rep, ReplicatedTrials(*ds, config, rows));
  SearchVerdicts v;
  v.q = config.schedule.fdr_q;
  for (const auto& [id, x] : rep) {
    ++v.replicated;
    v.confirmed += x.confirmed;
    v.significant += x.stats.stats.verdict == stats::Verdict::kSignificant;
    v.bh_rejected += x.bh;
  }
  return v;
}

Result<Table> SearchTopTable(const std::string& dir, int64_t search_id, int top,
                             bool exclude_degenerate) {
  XW_ASSIGN_OR_RETURN(auto ds, Dataset::Open(dir, OpenMode::kReadOnly));
  XW_ASSIGN_OR_RETURN(hpo::DriverConfig config, ConfigOfSearch(*ds, search_id));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, FinishedRows(*ds, search_id));
  const bool two_stage = hpo::IsTwoStage(config.schedule, config.search.objective);
  std::map<int64_t, Replicated> rep;
  if (two_stage) {
    // Over every replicated pair of the search (BH's family), whatever is shown.
    XW_ASSIGN_OR_RETURN(rep, ReplicatedTrials(*ds, config, rows));
    // Replicated pairs first, by their LCB; then the screened ones by diff.
    std::stable_sort(rows.begin(), rows.end(), [&rep](const TrialRow& a, const TrialRow& b) {
      auto ia = rep.find(a.id), ib = rep.find(b.id);
      if ((ia != rep.end()) != (ib != rep.end())) return ia != rep.end();
      if (ia == rep.end()) return false;
      return ia->second.stats.stats.lcb > ib->second.stats.stats.lcb;
    });
  }
  if (exclude_degenerate) {
    std::erase_if(rows, [](const TrialRow& r) { return IsDegenerate(DegenerateFlags(r)); });
  }
  if (static_cast<int>(rows.size()) > top) rows.resize(top);
  Table t;
  t.columns = {"trial"};
  for (const hpo::Dimension& d : config.search.space.dims()) t.columns.push_back(d.name);
  for (const std::string& p : config.search.profiles) t.columns.push_back("acc_" + p);
  t.columns.push_back(two_stage ? "diff" : hpo::ObjectiveName(config.search.objective));
  if (two_stage) {
    for (const char* c :
         {"stage", "k", "mean_diff", "diff_lcb", "p_value", "p_bh", "bh", "verdict"}) {
      t.columns.push_back(c);
    }
  }
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
    if (two_stage) {
      auto it = rep.find(r.id);
      if (it == rep.end()) {
        row.push_back(std::string("screened"));
        row.push_back(int64_t{1});
        for (int i = 0; i < 6; ++i) row.push_back(std::monostate{});
      } else {
        const Replicated& x = it->second;
        row.push_back(std::string(x.confirmed ? "confirmed" : "replicated"));
        row.push_back(x.stats.k_a);
        row.push_back(x.stats.stats.mean_diff);
        row.push_back(x.stats.stats.lcb);
        row.push_back(x.stats.stats.permutation_p);
        row.push_back(x.p_bh);
        row.push_back(std::string(x.bh ? "yes" : "no"));
        row.push_back(std::string(stats::VerdictName(x.stats.stats.verdict)));
      }
    }
    const ModelFlags f = TrialFlags(DegenerateFlags(r));
    for (int v : {f.collapsed, f.at_chance})
      row.push_back(v < 0 ? Cell(std::monostate{}) : Cell(int64_t{v}));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Result<Table> SearchesTable(const Dataset& ds, bool with_config) {
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, ds.Searches());
  Table t;
  t.columns = {"id",      "created_at", "status",    "arch",    "profiles",  "data",
               "train_limit", "test_limit", "width", "objective", "done",   "failed",
               "pending", "planned",    "best_trial", "best_diff"};
  if (with_config) {
    t.columns.push_back("config_json");
    t.columns.push_back("space_json");
  }
  for (const SearchRow& s : searches) {
    std::vector<Cell> row = {s.id, s.created_at, s.record.status};
    // A config this build cannot read (e.g. imported from a newer one)
    // leaves the config columns unknown; the counts still come from rows.
    auto c = hpo::ParseDriverConfigJson(s.record.config_json);
    if (c.ok()) {
      const hpo::SearchConfig& sc = c->search;
      auto limit = [](int64_t v) { return v < 0 ? Cell() : Cell(v); };
      row.insert(row.end(), {sc.arch, sc.profiles[0] + "," + sc.profiles[1], sc.data,
                             limit(sc.train_limit), limit(sc.test_limit),
                             c->train.arch_options.width});
    } else {
      row.insert(row.end(), 6, Cell());
    }
    row.push_back(s.record.objective);
    TrialQuery q;
    q.where = "search_id = " + std::to_string(s.id);
    XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, ds.Query(q));
    int64_t done = 0, failed = 0, pending = 0;
    const TrialRow* best = nullptr;
    for (const TrialRow& r : rows) {
      if (r.status == "pending") {
        ++pending;
      } else if (r.status == "failed") {
        ++failed;
      } else {
        ++done;
        if (!std::isnan(r.divergence) && (best == nullptr || r.divergence > best->divergence))
          best = &r;
      }
    }
    int64_t planned = -1;
    if (c.ok()) {
      planned = int64_t{hpo::NumSearchSubspaces(c->search)} * c->search.trials_per_subspace;
      if (c->search.budget.max_trials > 0)
        planned = std::min(planned, c->search.budget.max_trials);
    }
    row.insert(row.end(), {done, failed, pending, planned < 0 ? Cell() : Cell(planned)});
    row.push_back(best ? Cell(best->id) : Cell());
    row.push_back(best ? Cell(best->divergence) : Cell());
    if (with_config) {
      row.push_back(s.record.config_json);
      row.push_back(s.record.space_json);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace xw
