// Stored replicas (replicas.h): their HDF5 files and rows, and the rows of
// their statistics. The rules live in trial_rules.cc (CheckReplica).
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "dataset_impl.h"
#include "dir_lock.h"
#include "h5_adapter.h"
#include "model_file.h"
#include "replica_rows.h"
#include "sha256.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

constexpr char kGroup[] = "replica";

std::string What(const ReplicaRecord& r) {
  return "trial " + std::to_string(r.trial_id) + ", profile '" + r.profile + "', " +
         r.family + " replica " + std::to_string(r.replica);
}

bool TrialHasProfile(SQLite::Database& db, int64_t trial_id, const std::string& profile,
                     bool* trial_exists) {
  SQLite::Statement t(db, "SELECT 1 FROM trials WHERE id = ?");
  t.bind(1, trial_id);
  *trial_exists = t.executeStep();
  SQLite::Statement m(db, "SELECT 1 FROM models WHERE trial_id = ? AND profile = ?");
  m.bind(1, trial_id);
  m.bind(2, profile);
  return m.executeStep();
}

constexpr char kReplicaColumns[] =
    "r.id, r.trial_id, r.profile, r.family, r.replica, r.params_json, r.status, "
    "r.test_acc, r.test_loss, r.first_nonfinite_step, r.n_examples, r.has_weights, "
    "r.weights_sha256, r.h5_file, r.h5_group, r.wall_time_s, r.fingerprint_json, "
    "r.created_at, r.n_epochs";

ReplicaRecord ReadReplicaRow(const SQLite::Statement& st, int64_t* n_epochs) {
  ReplicaRecord r;
  r.id = st.getColumn(0).getInt64();
  r.trial_id = st.getColumn(1).getInt64();
  r.profile = sql::GetText(st.getColumn(2));
  r.family = sql::GetText(st.getColumn(3));
  r.replica = st.getColumn(4).getInt64();
  r.params_json = sql::GetText(st.getColumn(5));
  r.status = sql::GetText(st.getColumn(6));
  r.test_acc = sql::GetReal(st.getColumn(7));
  r.test_loss = sql::GetReal(st.getColumn(8));
  r.first_nonfinite_step = sql::GetOptInt(st.getColumn(9)).value_or(-1);
  r.n_examples = st.getColumn(10).getInt64();
  r.has_weights = st.getColumn(11).getInt() != 0;
  r.weights_sha256 = sql::GetText(st.getColumn(12));
  r.h5_file = sql::GetText(st.getColumn(13));
  r.h5_group = sql::GetText(st.getColumn(14));
  r.wall_time_s = sql::GetReal(st.getColumn(15));
  r.fingerprint_json = sql::GetText(st.getColumn(16));
  r.created_at = sql::GetText(st.getColumn(17));
  *n_epochs = st.getColumn(18).getInt64();
  return r;
}

}  // namespace

namespace internal {

int64_t InsertReplicaRow(SQLite::Database& db, const ReplicaRecord& r, int64_t trial_id,
                         const std::string& file, const std::string& group,
                         const std::string& sha) {
  SQLite::Statement st(db,
                       "INSERT INTO replicas (trial_id, profile, family, replica, "
                       "params_json, status, test_acc, test_loss, first_nonfinite_step, "
                       "n_epochs, n_examples, has_weights, weights_sha256, h5_file, "
                       "h5_group, wall_time_s, fingerprint_json, created_at) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, trial_id);
  st.bind(2, r.profile);
  st.bind(3, r.family);
  st.bind(4, r.replica);
  st.bind(5, r.params_json);
  st.bind(6, r.status);
  sql::BindReal(st, 7, r.test_acc);
  // +-inf losses of a diverged replica are stored as NULL (unknown), as
  // models' are not: the replica's status already says it diverged.
  sql::BindReal(st, 8, std::isfinite(r.test_loss) ? r.test_loss : kUnknown);
  sql::BindOptInt(st, 9, r.first_nonfinite_step > 0
                             ? std::optional<int64_t>(r.first_nonfinite_step)
                             : std::nullopt);
  st.bind(10, static_cast<int64_t>(r.curves.size()));
  st.bind(11, static_cast<int64_t>(r.predictions.size()));
  st.bind(12, r.weights.empty() ? 0 : 1);
  st.bind(13, sha);
  st.bind(14, file);
  st.bind(15, group);
  sql::BindReal(st, 16, r.wall_time_s);
  st.bind(17, r.fingerprint_json.empty() ? std::string("{}") : r.fingerprint_json);
  st.bind(18, UtcNow());
  st.exec();
  return db.getLastInsertRowid();
}

}  // namespace internal

Result<int64_t> StoreReplica(Dataset& ds, const ReplicaRecord& in) {
  Dataset::Impl& impl = ds.impl();
  if (impl.read_only) return Status::FailedPrecondition(impl.dir + ": opened read-only");
  const std::string what = What(in);
  XW_RETURN_IF_ERROR(CheckReplica(in, what));
  // The trial, the profile and the slot, before any file is written.
  Status pre = sql::Guarded(impl.DbPath(), [&]() -> Status {
    bool trial_exists = false;
    if (!TrialHasProfile(*impl.db, in.trial_id, in.profile, &trial_exists)) {
      return Status::NotFound(trial_exists ? what + ": the trial has no model under profile '" +
                                                 in.profile + "'"
                                           : "trial " + std::to_string(in.trial_id) +
                                                 " is not in " + impl.dir);
    }
    SQLite::Statement st(*impl.db,
                         "SELECT 1 FROM replicas WHERE trial_id = ? AND profile = ? AND "
                         "family = ? AND replica = ?");
    st.bind(1, in.trial_id);
    st.bind(2, in.profile);
    st.bind(3, in.family);
    st.bind(4, in.replica);
    if (st.executeStep()) return Status::AlreadyExists(what + " is already stored");
    return Status::OK();
  });
  XW_RETURN_IF_ERROR(pre);
  const std::string sha = in.weights_sha256.empty() && !in.weights.empty()
                              ? WeightsSha256(in.weights)
                              : in.weights_sha256;
  // Shared lock from the file's creation to the commit (fsck --repair takes
  // it exclusively and would otherwise see the file as an orphan).
  XW_ASSIGN_OR_RETURN(DirLock lock, DirLock::Acquire(impl.dir, DirLock::Kind::kShared));
  // The file's name is a function of the replica's identity, not random: a
  // run killed between the file and its row leaves the file, and the resumed
  // run writes the same replica to the same name (an atomic replace), so no
  // orphan is left behind once the replica is stored.
  const std::string key = Sha256Hex(std::to_string(in.trial_id) + "\n" + in.profile + "\n" +
                                    in.family + "\n" + std::to_string(in.replica));
  const std::string file = "h5/" + key.substr(0, 2) + "/replica-" + key.substr(0, 32) + ".h5";
  std::error_code ec;
  fs::create_directories(fs::path(impl.Abs(file)).parent_path(), ec);
  if (ec) return Status::IOError(impl.Abs(file) + ": cannot create directory: " + ec.message());
  h5::RemoveDeadWritersTemps(impl.Abs(file));
  BundleModel bm;
  bm.group = kGroup;
  bm.weights = &in.weights;
  bm.curves = &in.curves;
  bm.predictions = &in.predictions;
  bm.attrs = {{"profile", in.profile},
              {"family", in.family},
              {"replica", std::to_string(in.replica)},
              {"status", in.status}};
  XW_RETURN_IF_ERROR(WriteBundle(impl.Abs(file), {bm}));
  int64_t id = 0;
  Status s = sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    id = internal::InsertReplicaRow(*impl.db, in, in.trial_id, file, kGroup, sha);
    tx.commit();
    return Status::OK();
  });
  if (!s.ok()) {
    fs::remove(impl.Abs(file), ec);
    return s;
  }
  return id;
}

Result<std::vector<ReplicaRecord>> LoadReplicas(const Dataset& ds, int64_t trial_id,
                                                const std::string& family, bool with_data) {
  Dataset::Impl& impl = ds.impl();
  std::vector<ReplicaRecord> out;
  std::vector<int64_t> epochs;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(
        *impl.db, std::string("SELECT ") + kReplicaColumns +
                      " FROM replicas r LEFT JOIN models m ON m.trial_id = r.trial_id AND "
                      "m.profile = r.profile WHERE r.trial_id = ? AND (? = '' OR r.family = ?) "
                      "ORDER BY m.idx, r.profile, r.family, r.replica");
    st.bind(1, trial_id);
    st.bind(2, family);
    st.bind(3, family);
    while (st.executeStep()) {
      int64_t n = 0;
      out.push_back(ReadReplicaRow(st, &n));
      epochs.push_back(n);
    }
    return Status::OK();
  }));
  if (!with_data) return out;
  for (size_t i = 0; i < out.size(); ++i) {
    ReplicaRecord& r = out[i];
    const std::string path = impl.Abs(r.h5_file);
    auto curves = ReadBundleCurves(path, r.h5_group);
    if (!curves.ok()) return curves.status().WithContext(What(r));
    r.curves = std::move(curves).value();
    auto pred = ReadBundlePredictions(path, r.h5_group);
    if (!pred.ok()) return pred.status().WithContext(What(r));
    r.predictions = std::move(pred).value();
    if (static_cast<int64_t>(r.curves.size()) != epochs[i] ||
        static_cast<int64_t>(r.predictions.size()) != r.n_examples) {
      return Status::Corruption(What(r) + ": " + path + " holds " +
                                std::to_string(r.curves.size()) + " epochs and " +
                                std::to_string(r.predictions.size()) +
                                " predictions; the row says " + std::to_string(epochs[i]) +
                                " and " + std::to_string(r.n_examples));
    }
  }
  return out;
}

Result<NamedTensors> LoadReplicaWeights(const Dataset& ds, const ReplicaRecord& r) {
  if (!r.has_weights) return Status::NotFound(What(r) + ": no weights are stored");
  auto w = ReadBundleWeights(ds.impl().Abs(r.h5_file), r.h5_group);
  if (!w.ok()) return w.status().WithContext(What(r));
  if (WeightsSha256(*w) != r.weights_sha256) {
    return Status::Corruption(What(r) + ": the stored weights do not match weights_sha256");
  }
  return w;
}

}  // namespace xw
