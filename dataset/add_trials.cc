// Dataset::AddTrial(s): validation, the HDF5 bundle, then one SQL transaction.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "dataset_impl.h"
#include "dir_lock.h"
#include "model_file.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"

namespace xw {

namespace fs = std::filesystem;

namespace {

bool ValidProfileName(const std::string& p) {
  if (p.empty() || p.size() > 64) return false;
  for (char c : p) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.')
      return false;
  }
  return true;
}

Status CheckJson(const std::string& text, const std::string& what,
                 bool must_be_object) {
  if (text.empty()) return Status::OK();
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::InvalidArgument(what + " is not valid JSON");
  if (must_be_object && !j.is_object())
    return Status::InvalidArgument(what + " is not a JSON object");
  return Status::OK();
}

Status ValidateTrial(const TrialRecord& t, const std::string& what) {
  if (t.arch.empty()) return Status::InvalidArgument(what + ": empty arch");
  if (t.models.empty()) return Status::InvalidArgument(what + ": no models");
  XW_RETURN_IF_ERROR(CheckJson(t.hparams_json, what + ": hparams_json", true));
  XW_RETURN_IF_ERROR(CheckJson(t.extra_json, what + ": extra_json", true));
  std::set<std::string> seen;
  static const std::set<std::string> kStatuses = {"ok", "diverged", "failed",
                                                  "incomplete"};
  for (const ModelRecord& m : t.models) {
    std::string mw = what + ": model '" + m.profile + "'";
    if (!ValidProfileName(m.profile)) {
      return Status::InvalidArgument(
          mw + ": profile name must be 1-64 of [A-Za-z0-9_.-]");
    }
    if (!seen.insert(m.profile).second)
      return Status::InvalidArgument(mw + ": duplicate profile");
    if (!kStatuses.count(m.status)) {
      return Status::InvalidArgument(mw + ": unknown status '" + m.status +
                                     "' (ok, diverged, failed, incomplete)");
    }
    XW_RETURN_IF_ERROR(CheckJson(m.profile_json, mw + ": profile_json", false));
    XW_RETURN_IF_ERROR(
        CheckJson(m.fingerprint_json, mw + ": fingerprint_json", true));
    if (!m.weights_sha256.empty() && !m.weights.empty() &&
        m.weights_sha256 != WeightsSha256(m.weights)) {
      return Status::InvalidArgument(
          mw + ": weights_sha256 does not match the weights");
    }
  }
  return CheckTrialValues(t, what);
}

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
                 const std::string& provenance, const std::string& file,
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
  sql::BindOptInt(st, 16, t.search_id);
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
  if (impl_->read_only)
    return Status::FailedPrecondition(impl_->dir + ": opened read-only");
  std::vector<BundleModel> bundle;
  for (size_t k = 0; k < trials.size(); ++k) {
    const TrialRecord& t = trials[k];
    XW_RETURN_IF_ERROR(ValidateTrial(
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
  // Shared lock from the bundle's creation to the commit: fsck --repair (which
  // takes it exclusively) never sees our bundle as an orphan.
  XW_ASSIGN_OR_RETURN(DirLock lock,
                      DirLock::Acquire(impl_->dir, DirLock::Kind::kShared));
  std::string file;
  if (!bundle.empty()) {
    file = NewBundleName();
    std::error_code ec;
    fs::create_directories(fs::path(impl_->Abs(file)).parent_path(), ec);
    if (ec)
      return Status::IOError(impl_->Abs(file) +
                             ": cannot create directory: " + ec.message());
    XW_RETURN_IF_ERROR(WriteBundle(impl_->Abs(file), bundle));
  }
  std::vector<int64_t> ids;
  ids.reserve(trials.size());
  const std::string default_prov = DefaultProvenance();
  Status s = sql::Guarded(impl_->DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    Inserter in(*impl_->db);
    for (size_t k = 0; k < trials.size(); ++k) {
      const TrialRecord& t = trials[k];
      InsertTrial(in, t, t.provenance.empty() ? default_prov : t.provenance,
                  file, k, ids);
    }
    tx.commit();
    return Status::OK();
  });
  if (!s.ok()) {
    if (!file.empty()) std::filesystem::remove(impl_->Abs(file));
    return s;
  }
  return ids;
}

}  // namespace xw
