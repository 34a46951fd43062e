// The dataset side of a search: search row, trial events, history.
#include "driver_store.h"

#include <unistd.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "xwires/core/build_info.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/degenerate.h"
#include "xwires/dataset/store/search_log.h"
#include "xwires/trainers/metrics.h"

namespace xw::hpo::internal {
namespace {

using json = nlohmann::json;

std::string Provenance() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return "xwires " + GetBuildInfo().toolkit_version + " search on " + host;
}

std::string SpaceJson(const SearchSpace& s) {
  json dims = json::array();
  for (const Dimension& d : s.dims()) {
    dims.push_back({{"name", d.name},
                    {"type", DimTypeName(d.type)},
                    {"low", d.low},
                    {"high", d.high},
                    {"log", d.log}});
  }
  return dims.dump();
}

// Merges object `b` into object `a` (both JSON object texts).
std::string MergeObjects(const std::string& a, const std::string& b) {
  json ja = a.empty() ? json::object() : json::parse(a, nullptr, false);
  json jb = b.empty() ? json::object() : json::parse(b, nullptr, false);
  if (!ja.is_object()) ja = json::object();
  if (jb.is_object()) {
    for (auto& [k, v] : jb.items()) ja[k] = v;
  }
  return ja.dump();
}

}  // namespace

std::string SearchExtraJson(int subspace, const std::vector<double>& x,
                            int64_t pending_ref, const std::string& objective,
                            const std::string& optimizer_state, int64_t finished) {
  json s = {{"subspace", subspace}, {"point", x}, {"objective", objective}};
  if (pending_ref > 0) s["pending_trial"] = pending_ref;
  if (!optimizer_state.empty()) {
    json o = json::parse(optimizer_state, nullptr, false);
    if (o.is_object()) s["optimizer"] = std::move(o);
  }
  if (finished >= 0) s["finished"] = finished;
  return json{{"search", s}}.dump();
}

std::string OptimizerStateJson(const GpOptimizer& opt) {
  if (opt.options().acquisition != AcquisitionKind::kGpHedge) return "";
  const HedgeState& h = opt.hedge_state();
  // nlohmann writes doubles in their shortest round-trip form: the state
  // read back is bit-identical.
  json hedge = {{"gains", h.gains},
                {"proposals", h.proposals},
                {"proposal_n", h.proposal_n}};
  return json{{"hedge", hedge}}.dump();
}

Status RestoreOptimizerState(GpOptimizer& opt, const std::string& state) {
  if (state.empty()) return Status::OK();
  json j = json::parse(state, nullptr, false);
  if (!j.is_object() || !j.contains("hedge")) {
    return Status::InvalidArgument("optimizer state: not a JSON object with "
                                   "\"hedge\"");
  }
  if (opt.options().acquisition != AcquisitionKind::kGpHedge)
    return Status::OK();  // nothing to restore
  HedgeState h;
  try {
    const json& v = j.at("hedge");
    h.gains = v.at("gains").get<std::array<double, 3>>();
    h.proposals = v.at("proposals").get<std::vector<std::vector<double>>>();
    h.proposal_n = v.at("proposal_n").get<int>();
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("optimizer state: ") + e.what());
  }
  return opt.set_hedge_state(h);
}

Result<HistoryEntry> EntryOfRow(int64_t id, const std::string& status,
                                const std::string& extra_json,
                                double divergence) {
  const std::string what = "trial " + std::to_string(id);
  json j = json::parse(extra_json, nullptr, false);
  if (!j.is_object() || !j.contains("search") || !j["search"].is_object()) {
    return Status::InvalidArgument(
        what + ": not written by the search driver (no extra_json.search)");
  }
  const json& s = j["search"];
  HistoryEntry e;
  e.id = id;
  if (!s.contains("subspace") || !s["subspace"].is_number_integer() ||
      !s.contains("point") || !s["point"].is_array()) {
    return Status::InvalidArgument(
        what + ": extra_json.search lacks subspace or point");
  }
  e.subspace = s["subspace"].get<int>();
  for (const json& v : s["point"]) {
    if (!v.is_number())
      return Status::InvalidArgument(what + ": non-numeric point");
    e.x.push_back(v.get<double>());
  }
  if (s.contains("pending_trial") && s["pending_trial"].is_number_integer()) {
    e.pending_ref = s["pending_trial"].get<int64_t>();
  }
  if (s.contains("optimizer") && s["optimizer"].is_object())
    e.optimizer_state = s["optimizer"].dump();
  if (s.contains("finished") && s["finished"].is_number_integer()) {
    e.finished = s["finished"].get<int64_t>();
  }
  if (status == "pending") {
    e.status = "pending";
  } else if (j.contains("error") || std::isnan(divergence)) {
    e.status = "failed";
  } else {
    e.status = "done";
    e.objective = divergence;
  }
  return e;
}

Result<std::unique_ptr<SearchStore>> SearchStore::Create(
    const std::string& dir, const DriverConfig& c) {
  std::unique_ptr<SearchStore> s(new SearchStore());
  XW_ASSIGN_OR_RETURN(s->ds_, Dataset::Open(dir, OpenMode::kCreate));
  s->config_ = c;
  s->provenance_ = Provenance();
  SearchRecord rec;
  rec.config_json = DriverConfigToJson(c);
  rec.space_json = SpaceJson(c.search.space);
  rec.objective = ObjectiveName(c.search.objective) + "(" +
                  c.search.profiles[0] + "," + c.search.profiles[1] + ")";
  rec.status = "running";
  XW_ASSIGN_OR_RETURN(s->id_, s->ds_->AddSearch(rec));
  XW_ASSIGN_OR_RETURN(SearchWriterLock lock,
                      SearchWriterLock::Acquire(*s->ds_, s->id_));
  s->lock_.emplace(std::move(lock));
  return s;
}

Result<std::unique_ptr<SearchStore>> SearchStore::Resume(const std::string& dir,
                                                         int64_t id) {
  std::unique_ptr<SearchStore> s(new SearchStore());
  XW_ASSIGN_OR_RETURN(s->ds_, Dataset::Open(dir, OpenMode::kReadWrite));
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, s->ds_->Searches());
  const SearchRow* row = nullptr;
  for (const SearchRow& r : searches) {
    if (r.id == id) row = &r;
  }
  if (row == nullptr) {
    return Status::NotFound(dir + ": no search with id " + std::to_string(id) +
                            " to resume");
  }
  auto config = ParseDriverConfigJson(row->record.config_json);
  if (!config.ok()) {
    return config.status().WithContext(
        dir + ": search " + std::to_string(id) +
        " has a config this driver cannot resume");
  }
  s->config_ = std::move(config).value();
  s->id_ = id;
  s->provenance_ = Provenance();
  // Before reading its rows: another writer's pending points are not ours
  // to re-train.
  XW_ASSIGN_OR_RETURN(SearchWriterLock lock,
                      SearchWriterLock::Acquire(*s->ds_, id));
  s->lock_.emplace(std::move(lock));

  TrialQuery q;
  q.where = "search_id = " + std::to_string(id);
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, s->ds_->Query(q));
  std::vector<HistoryEntry> all;
  std::set<int64_t> completed;
  for (const TrialRow& r : rows) {
    auto e = EntryOfRow(r.id, r.status, r.extra_json, r.divergence);
    if (!e.ok())
      return e.status().WithContext(dir + ": search " + std::to_string(id));
    if (e->status == "done" && e->pending_ref > 0)
      completed.insert(e->pending_ref);
    e->degenerate = IsDegenerate(DegenerateFlags(r));
    all.push_back(std::move(e).value());
  }
  for (HistoryEntry& e : all) {
    if (e.status == "pending" && completed.count(e.id)) {
      XW_RETURN_IF_ERROR(DeletePendingTrial(*s->ds_, e.id));
      continue;
    }
    if (e.status == "pending") s->states_[e.id] = e.optimizer_state;
    s->history_.push_back(std::move(e));
  }
  s->OrderDoneByFinish();
  XW_RETURN_IF_ERROR(s->ds_->SetSearchStatus(id, "running"));
  return s;
}

void SearchStore::OrderDoneByFinish() {
  // The optimisers learn the finished trials in the order they finished:
  // the done entries are reordered among their own positions (rows without
  // an ordinal first, by id: they finished before any row that has one).
  std::vector<size_t> slots;
  std::vector<HistoryEntry> done;
  for (size_t i = 0; i < history_.size(); ++i) {
    if (history_[i].status != "done") continue;
    slots.push_back(i);
    done.push_back(history_[i]);
  }
  std::stable_sort(done.begin(), done.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
    return a.finished < b.finished;
  });
  for (size_t k = 0; k < slots.size(); ++k) history_[slots[k]] = std::move(done[k]);
  finished_ = static_cast<int64_t>(slots.size());
}

Result<int64_t> SearchStore::AddPending(int subspace,
                                        const std::vector<double>& x,
                                        int threads,
                                        const std::string& optimizer_state) {
  const TrainOptions o = TrialTrainOptions(config_, x, threads);
  TrialRecord t = TrialRecordFor(o);
  t.search_id = id_;
  t.provenance = provenance_;
  t.extra_json = SearchExtraJson(subspace, x, 0,
                                 ObjectiveName(config_.search.objective),
                                 optimizer_state);
  XW_ASSIGN_OR_RETURN(int64_t id, AddPendingTrial(*ds_, t));
  states_[id] = optimizer_state;
  return id;
}

Result<int64_t> SearchStore::AddDone(int64_t pending_id, int subspace,
                                     const std::vector<double>& x,
                                     TrialRecord r) {
  r.search_id = id_;
  r.provenance = provenance_;
  r.extra_json = MergeObjects(
      r.extra_json, SearchExtraJson(subspace, x, 0,
                                    ObjectiveName(config_.search.objective),
                                    states_[pending_id], finished_));
  XW_ASSIGN_OR_RETURN(int64_t id, CompletePendingTrial(*ds_, pending_id, r));
  states_.erase(pending_id);
  ++finished_;
  return id;
}

Status SearchStore::AddFailed(int64_t pending_id, int subspace,
                              const std::vector<double>& x,
                              const std::string& message) {
  json extra = json::parse(
      SearchExtraJson(subspace, x, 0, ObjectiveName(config_.search.objective),
                      states_[pending_id]));
  extra["error"] = message;
  states_.erase(pending_id);
  return MarkTrialFailed(*ds_, pending_id, extra.dump());
}

Status SearchStore::SetStatus(const std::string& status) {
  return ds_->SetSearchStatus(id_, status);
}

}  // namespace xw::hpo::internal
