// Pending and failed trial rows of a search (search_log.h).
#include "xwires/dataset/store/search_log.h"

#include <cfloat>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "dataset_impl.h"
#include "dataset_internal.h"
#include "sqlite_adapter.h"
#include "xwires/core/clock.h"

namespace xw {
namespace {

Status CheckObject(const std::string& text, const std::string& what) {
  if (text.empty()) return Status::OK();
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(what + " is not a JSON object");
  }
  return Status::OK();
}

Status CheckWritable(const Dataset& ds) {
  if (ds.read_only()) return Status::FailedPrecondition(ds.dir() + ": opened read-only");
  return Status::OK();
}

int64_t ProvenanceId(SQLite::Database& db, const std::string& description) {
  SQLite::Statement ins(db, "INSERT OR IGNORE INTO provenance (description, created_at) VALUES (?, ?)");
  ins.bind(1, description);
  ins.bind(2, UtcNow());
  ins.exec();
  SQLite::Statement sel(db, "SELECT id FROM provenance WHERE description = ?");
  sel.bind(1, description);
  sel.executeStep();
  return sel.getColumn(0).getInt64();
}

}  // namespace

Result<int64_t> AddPendingTrial(Dataset& ds, const TrialRecord& t) {
  XW_RETURN_IF_ERROR(CheckWritable(ds));
  if (t.arch.empty()) return Status::InvalidArgument("pending trial: empty arch");
  if (!t.models.empty()) return Status::InvalidArgument("pending trial: must have no models");
  XW_RETURN_IF_ERROR(CheckObject(t.hparams_json, "pending trial: hparams_json"));
  XW_RETURN_IF_ERROR(CheckObject(t.extra_json, "pending trial: extra_json"));
  auto& impl = ds.impl();
  int64_t id = 0;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Database& db = *impl.db;
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    const int64_t prov = ProvenanceId(db, t.provenance.empty() ? "xwires search" : t.provenance);
    SQLite::Statement st(
        db,
        "INSERT INTO trials (created_at, arch, data_spec, status, lr, adam_eps, beta1, beta2, "
        "weight_decay, batch_size, epochs, seed, divergence, hparams_json, extra_json, "
        "search_id, provenance_id, external_id) VALUES "
        "(?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)");
    st.bind(1, UtcNow());
    st.bind(2, t.arch);
    st.bind(3, t.data_spec);
    sql::BindReal(st, 4, t.lr);
    sql::BindReal(st, 5, t.adam_eps);
    sql::BindReal(st, 6, t.beta1);
    sql::BindReal(st, 7, t.beta2);
    sql::BindReal(st, 8, t.weight_decay);
    sql::BindOptInt(st, 9, t.batch_size > 0 ? std::optional<int64_t>(t.batch_size) : std::nullopt);
    sql::BindOptInt(st, 10, t.epochs > 0 ? std::optional<int64_t>(t.epochs) : std::nullopt);
    sql::BindOptInt(st, 11, t.seed);
    st.bind(12, t.hparams_json.empty() ? "{}" : t.hparams_json);
    st.bind(13, t.extra_json.empty() ? "{}" : t.extra_json);
    sql::BindOptInt(st, 14, t.search_id);
    st.bind(15, prov);
    st.bind(16, t.external_id);
    st.exec();
    id = db.getLastInsertRowid();
    tx.commit();
    return Status::OK();
  }));
  return id;
}

Result<int64_t> CompletePendingTrial(Dataset& ds, int64_t pending_id,
                                     const TrialRecord& trial) {
  internal::BatchExtras extras;
  extras.replaces_pending = pending_id;
  XW_ASSIGN_OR_RETURN(internal::BatchResult r, internal::AddBatch(ds, {trial}, extras));
  return r.trial_ids[0];
}

Status MarkTrialFailed(Dataset& ds, int64_t trial_id, const std::string& extra_json) {
  XW_RETURN_IF_ERROR(CheckWritable(ds));
  XW_RETURN_IF_ERROR(CheckObject(extra_json, "failed trial: extra_json"));
  auto& impl = ds.impl();
  return sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         "UPDATE trials SET status = 'failed', extra_json = ? "
                         "WHERE id = ? AND status = 'pending'");
    st.bind(1, extra_json.empty() ? "{}" : extra_json);
    st.bind(2, trial_id);
    if (st.exec() == 0) {
      return Status::NotFound(ds.dir() + ": no pending trial with id " + std::to_string(trial_id));
    }
    return Status::OK();
  });
}

Status DeletePendingTrial(Dataset& ds, int64_t trial_id) {
  XW_RETURN_IF_ERROR(CheckWritable(ds));
  auto& impl = ds.impl();
  return sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db, "DELETE FROM trials WHERE id = ? AND status = 'pending'");
    st.bind(1, trial_id);
    if (st.exec() == 0) {
      return Status::NotFound(ds.dir() + ": no pending trial with id " + std::to_string(trial_id));
    }
    return Status::OK();
  });
}

}  // namespace xw
