// Dataset::AddTrial(s): validation, the HDF5 bundle, then one SQL transaction.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "analysis_rows.h"
#include "dataset_impl.h"
#include "dataset_internal.h"
#include "dir_lock.h"
#include "model_file.h"
#include "near_schema.h"
#include "replica_batch.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"

namespace xw {

namespace fs = std::filesystem;

namespace {

// Worst model status: failed > diverged > incomplete > ok.
std::string TrialStatus(const TrialRecord& t) {
  static const char* kOrder[] = {"failed", "diverged", "incomplete"};
  for (const char* s : kOrder) {
    for (const ModelRecord& m : t.models) {
      if (m.status == s) return s;
    }
  }
  return "ok";
}

std::string FingerprintField(const std::string& json, const char* key) {
  if (json.empty()) return "";
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_object() && j.contains(key) && j[key].is_string())
    return j[key].get<std::string>();
  return "";
}

std::string DefaultProvenance() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return "xwires " + GetBuildInfo().toolkit_version + " on " + host;
}

// Prepared statements of one AddTrials transaction.
struct Inserter {
  explicit Inserter(SQLite::Database& db)
      : db(db),
        prov_ins(db,
                 "INSERT OR IGNORE INTO provenance (description, created_at) "
                 "VALUES (?, ?)"),
        prov_sel(db, "SELECT id FROM provenance WHERE description = ?"),
        prof_ins(db,
                 "INSERT OR IGNORE INTO profiles (name, json, external) VALUES "
                 "(?, ?, ?)"),
        prof_sel(db,
                 "SELECT id FROM profiles WHERE name = ? AND json = ? AND "
                 "external = ?"),
        trial(db,
              "INSERT INTO trials (created_at, arch, data_spec, status, lr, "
              "adam_eps, beta1, beta2, "
              "weight_decay, batch_size, epochs, seed, divergence, "
              "hparams_json, extra_json, "
              "search_id, provenance_id, external_id) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        model(db,
              "INSERT INTO models (trial_id, idx, profile, profile_id, status, "
              "train_acc, test_acc, "
              "train_loss, test_loss, n_epochs, has_weights, h5_file, "
              "h5_group, weights_sha256, "
              "param_count, wall_time_s, fingerprint_json, isa, compiler, "
              "threads) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)") {}

  int64_t ProvenanceId(const std::string& d) {
    auto it = prov_cache.find(d);
    if (it != prov_cache.end()) return it->second;
    prov_ins.reset();
    prov_ins.bind(1, d);
    prov_ins.bind(2, now);
    prov_ins.exec();
    prov_sel.reset();
    prov_sel.bind(1, d);
    prov_sel.executeStep();
    return prov_cache[d] = prov_sel.getColumn(0).getInt64();
  }

  int64_t ProfileId(const ModelRecord& m) {
    // Most trials reuse the previous trial's profiles: check that first.
    for (const auto& [pm, id] : prof_recent) {
      if (pm->profile == m.profile && pm->external == m.external &&
          pm->profile_json == m.profile_json) {
        return id;
      }
    }
    int64_t id = ProfileIdSlow(m);
    if (prof_recent.size() >= 4) prof_recent.erase(prof_recent.begin());
    prof_recent.emplace_back(&m, id);
    return id;
  }

  int64_t ProfileIdSlow(const ModelRecord& m) {
    auto key = std::make_tuple(m.profile, m.profile_json, m.external);
    auto it = prof_cache.find(key);
    if (it != prof_cache.end()) return it->second;
    for (SQLite::Statement* st : {&prof_ins, &prof_sel}) {
      st->reset();
      st->bind(1, m.profile);
      st->bind(2, m.profile_json);
      st->bind(3, m.external ? 1 : 0);
    }
    prof_ins.exec();
    prof_sel.executeStep();
    return prof_cache[key] = prof_sel.getColumn(0).getInt64();
  }

  SQLite::Database& db;
  SQLite::Statement prov_ins, prov_sel, prof_ins, prof_sel, trial, model;
  std::map<std::string, int64_t> prov_cache;
  std::map<std::tuple<std::string, std::string, bool>, int64_t> prof_cache;
  std::vector<std::pair<const ModelRecord*, int64_t>>
      prof_recent;  // records outlive the call
  std::string now = UtcNow();
};

// Binds text without copying it: every string bound here outlives exec().
void BindText(SQLite::Statement& st, int index, const std::string& s) {
  st.bindNoCopy(index, s);
}

void InsertTrial(Inserter& in, const TrialRecord& t,
                 const std::string& provenance,
                 std::optional<int64_t> search_id, const std::string& file,
                 size_t k, std::vector<int64_t>& ids) {
  static const std::string kEmptyObject = "{}", kEmpty;
  const std::string status = TrialStatus(t);
  auto& st = in.trial;
  st.reset();
  BindText(st, 1, in.now);
  BindText(st, 2, t.arch);
  BindText(st, 3, t.data_spec);
  BindText(st, 4, status);
  sql::BindReal(st, 5, t.lr);
  sql::BindReal(st, 6, t.adam_eps);
  sql::BindReal(st, 7, t.beta1);
  sql::BindReal(st, 8, t.beta2);
  sql::BindReal(st, 9, t.weight_decay);
  sql::BindOptInt(
      st, 10,
      t.batch_size > 0 ? std::optional<int64_t>(t.batch_size) : std::nullopt);
  sql::BindOptInt(
      st, 11, t.epochs > 0 ? std::optional<int64_t>(t.epochs) : std::nullopt);
  sql::BindOptInt(st, 12, t.seed);
  sql::BindReal(st, 13, t.divergence);
  BindText(st, 14, t.hparams_json.empty() ? kEmptyObject : t.hparams_json);
  BindText(st, 15, t.extra_json.empty() ? kEmptyObject : t.extra_json);
  sql::BindOptInt(st, 16, search_id);
  st.bind(17, in.ProvenanceId(provenance));
  BindText(st, 18, t.external_id);
  st.exec();
  const int64_t id = in.db.getLastInsertRowid();
  ids.push_back(id);

  for (size_t j = 0; j < t.models.size(); ++j) {
    const ModelRecord& m = t.models[j];
    const bool in_file = !m.weights.empty() || !m.curves.empty();
    const std::string group =
        in_file ? std::to_string(k) + "/" + std::to_string(j) : "";
    const std::string sha = m.weights.empty() ? ""
                            : m.weights_sha256.empty()
                                ? WeightsSha256(m.weights)
                                : m.weights_sha256;
    const std::string isa = FingerprintField(m.fingerprint_json, "isa");
    const std::string compiler =
        FingerprintField(m.fingerprint_json, "compiler");
    auto& ms = in.model;
    ms.reset();
    ms.bind(1, id);
    ms.bind(2, static_cast<int64_t>(j));
    BindText(ms, 3, m.profile);
    ms.bind(4, in.ProfileId(m));
    BindText(ms, 5, m.status);
    sql::BindReal(ms, 6, m.train_acc);
    sql::BindReal(ms, 7, m.test_acc);
    sql::BindReal(ms, 8, m.train_loss);
    sql::BindReal(ms, 9, m.test_loss);
    ms.bind(10, static_cast<int64_t>(m.curves.size()));
    ms.bind(11, m.weights.empty() ? 0 : 1);
    if (in_file) {
      BindText(ms, 12, file);
      BindText(ms, 13, group);
    } else {
      ms.bind(12);
      ms.bind(13);
    }
    BindText(ms, 14, sha);
    ms.bind(15, m.param_count);
    sql::BindReal(ms, 16, m.wall_time_s);
    BindText(ms, 17,
             m.fingerprint_json.empty() ? kEmptyObject : m.fingerprint_json);
    BindText(ms, 18, isa);
    BindText(ms, 19, compiler);
    ms.bind(20, m.threads);
    ms.exec();
  }
}

}  // namespace

Result<int64_t> Dataset::AddTrial(const TrialRecord& trial) {
  XW_ASSIGN_OR_RETURN(std::vector<int64_t> ids, AddTrials({trial}));
  return ids[0];
}

Result<std::vector<int64_t>> Dataset::AddTrials(
    const std::vector<TrialRecord>& trials) {
  XW_ASSIGN_OR_RETURN(internal::BatchResult r,
                      internal::AddBatch(*this, trials, {}));
  return std::move(r.trial_ids);
}

namespace internal {
namespace {

// Checks the extras against the batch and brings their analyses to stored
// form (trial_ids are set in the transaction, once the trials have ids).
Result<std::vector<AnalysisRecord>> CheckExtras(const BatchExtras& x,
                                                size_t n_trials) {
  if (!x.trial_search.empty() && x.trial_search.size() != n_trials) {
    return Status::Internal("trial_search has " +
                            std::to_string(x.trial_search.size()) +
                            " entries for " + std::to_string(n_trials) +
                            " trials");
  }
  for (const auto& s : x.trial_search) {
    if (s && *s >= x.searches.size())
      return Status::Internal("trial_search names no search");
  }
  std::vector<AnalysisRecord> out;
  for (size_t i = 0; i < x.analyses.size(); ++i) {
    const BatchAnalysis& b = x.analyses[i];
    AnalysisRecord a = b.record;
    a.trial_ids = b.stored_trials;
    // Placeholders that keep the rules' count and distinctness checks
    // meaningful; replaced by the new ids in the transaction.
    for (size_t k : b.batch_trials) {
      if (k >= n_trials) {
        return Status::InvalidArgument("analysis " + std::to_string(i) +
                                       ": describes trial " +
                                       std::to_string(k) + " of " +
                                       std::to_string(n_trials));
      }
      a.trial_ids.push_back(-1 - static_cast<int64_t>(k));
    }
    XW_ASSIGN_OR_RETURN(out.emplace_back(),
                        StoredForm(a, "analysis " + std::to_string(i) + " (" +
                                          a.kind + ")"));
  }
  return out;
}

}  // namespace

Result<BatchResult> AddBatch(Dataset& ds,
                             const std::vector<TrialRecord>& trials,
                             const BatchExtras& extras) {
  Dataset::Impl& impl = ds.impl();
  if (impl.read_only)
    return Status::FailedPrecondition(impl.dir + ": opened read-only");
  std::vector<BundleModel> bundle;
  for (size_t k = 0; k < trials.size(); ++k) {
    const TrialRecord& t = trials[k];
    XW_RETURN_IF_ERROR(CheckTrialRecord(
        t, "trial " + std::to_string(k) +
               (t.external_id.empty() ? "" : " (" + t.external_id + ")")));
    for (size_t j = 0; j < t.models.size(); ++j) {
      const ModelRecord& m = t.models[j];
      if (m.weights.empty() && m.curves.empty()) continue;
      bundle.push_back(
          {std::to_string(k) + "/" + std::to_string(j),
           &m.weights,
           &m.curves,
           {{"profile", m.profile}, {"arch", t.arch}, {"status", m.status}}});
    }
  }
  XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> analyses,
                      CheckExtras(extras, trials.size()));
  XW_ASSIGN_OR_RETURN(ReplicaPlan replicas, PlanBatchReplicas(impl, trials, extras));
  AddReplicaGroups(extras, replicas, &bundle);
  // Shared lock from the bundle's creation to the commit: fsck --repair (which
  // takes it exclusively) never sees our bundle as an orphan.
  XW_ASSIGN_OR_RETURN(DirLock lock,
                      DirLock::Acquire(impl.dir, DirLock::Kind::kShared));
  std::string file;
  if (!bundle.empty()) {
    file = NewBundleName();
    std::error_code ec;
    fs::create_directories(fs::path(impl.Abs(file)).parent_path(), ec);
    if (ec)
      return Status::IOError(impl.Abs(file) +
                             ": cannot create directory: " + ec.message());
    XW_RETURN_IF_ERROR(WriteBundle(impl.Abs(file), bundle));
  }
  BatchResult result;
  result.trial_ids.reserve(trials.size());
  result.replicas_added = static_cast<int64_t>(replicas.replicas.size());
  result.replicas_skipped = replicas.replicas_skipped;
  result.replica_stats_added = static_cast<int64_t>(replicas.stats.size());
  result.replica_stats_skipped = replicas.stats_skipped;
  const std::string default_prov = DefaultProvenance();
  Status s = sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<int64_t> search_ids;
    for (const SearchRecord& search : extras.searches) {
      bool added = false;
      search_ids.push_back(FindOrInsertSearch(*impl.db, search, &added));
      result.searches_added += added ? 1 : 0;
    }
    Inserter in(*impl.db);
    // The near index is built set-based after the rows (near_schema.h).
    if (!trials.empty())
      impl.db->exec("INSERT INTO trials_near_deferred VALUES (1)");
    for (size_t k = 0; k < trials.size(); ++k) {
      const TrialRecord& t = trials[k];
      std::optional<int64_t> search = t.search_id;
      if (!extras.trial_search.empty() && extras.trial_search[k])
        search = search_ids[*extras.trial_search[k]];
      InsertTrial(in, t, t.provenance.empty() ? default_prov : t.provenance,
                  search, file, k, result.trial_ids);
    }
    if (!trials.empty()) {
      for (const std::string& stmt : near::DeferredIndexStatements()) {
        SQLite::Statement st(*impl.db, stmt);
        st.bind(1, result.trial_ids.front());
        st.bind(2, result.trial_ids.back());
        st.exec();
      }
      impl.db->exec("DELETE FROM trials_near_deferred");
    }
    for (size_t i = 0; i < analyses.size(); ++i) {
      AnalysisRecord& a = analyses[i];
      for (int64_t& id : a.trial_ids) {
        if (id < 0) id = result.trial_ids[static_cast<size_t>(-1 - id)];
      }
      std::sort(a.trial_ids.begin(), a.trial_ids.end());
      if (extras.analyses[i].batch_trials.empty() && HasAnalysis(*impl.db, a)) {
        ++result.analyses_skipped;
        continue;
      }
      XW_RETURN_IF_ERROR(InsertAnalysis(*impl.db, a,
                                        "analysis " + std::to_string(i) + " (" +
                                            a.kind + ")")
                             .status());
      ++result.analyses_added;
    }
    InsertBatchReplicas(*impl.db, extras, replicas, result.trial_ids, file);
    tx.commit();
    return Status::OK();
  });
  if (!s.ok()) {
    if (!file.empty()) std::filesystem::remove(impl.Abs(file));
    return s;
  }
  return result;
}

}  // namespace internal
}  // namespace xw
