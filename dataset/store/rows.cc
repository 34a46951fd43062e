// Row readers: SQL rows of trials/models -> TrialRow / ModelRow.
#include "dataset_impl.h"
#include "sqlite_adapter.h"

namespace xw {

const char* const kTrialColumns =
    "t.id, t.created_at, t.arch, t.data_spec, t.status, t.external_id, "
    "(SELECT description FROM provenance WHERE id = t.provenance_id), "
    "t.lr, t.adam_eps, t.beta1, t.beta2, t.weight_decay, t.divergence, "
    "t.batch_size, t.epochs, t.seed, t.search_id, t.hparams_json, t.extra_json";

TrialRow ReadTrialColumns(const SQLite::Statement& st) {
  TrialRow r;
  r.id = st.getColumn(0).getInt64();
  r.created_at = sql::GetText(st.getColumn(1));
  r.arch = sql::GetText(st.getColumn(2));
  r.data_spec = sql::GetText(st.getColumn(3));
  r.status = sql::GetText(st.getColumn(4));
  r.external_id = sql::GetText(st.getColumn(5));
  r.provenance = sql::GetText(st.getColumn(6));
  r.lr = sql::GetReal(st.getColumn(7));
  r.adam_eps = sql::GetReal(st.getColumn(8));
  r.beta1 = sql::GetReal(st.getColumn(9));
  r.beta2 = sql::GetReal(st.getColumn(10));
  r.weight_decay = sql::GetReal(st.getColumn(11));
  r.divergence = sql::GetReal(st.getColumn(12));
  r.batch_size = sql::GetOptInt(st.getColumn(13));
  r.epochs = sql::GetOptInt(st.getColumn(14));
  r.seed = sql::GetOptInt(st.getColumn(15));
  r.search_id = sql::GetOptInt(st.getColumn(16));
  r.hparams_json = sql::GetText(st.getColumn(17));
  r.extra_json = sql::GetText(st.getColumn(18));
  return r;
}

const char* const kModelSelect =
    "SELECT m.id, m.trial_id, m.profile, pr.external, m.status, m.train_acc, "
    "m.test_acc, "
    "m.train_loss, m.test_loss, m.n_epochs, m.has_weights, m.weights_sha256, "
    "m.param_count, "
    "m.wall_time_s, m.fingerprint_json, m.threads, m.h5_file, m.h5_group "
    "FROM models m JOIN profiles pr ON pr.id = m.profile_id";

ModelRow ReadModelColumns(const SQLite::Statement& st) {
  ModelRow m;
  m.id = st.getColumn(0).getInt64();
  m.trial_id = st.getColumn(1).getInt64();
  m.profile = sql::GetText(st.getColumn(2));
  m.external = st.getColumn(3).getInt() != 0;
  m.status = sql::GetText(st.getColumn(4));
  m.train_acc = sql::GetReal(st.getColumn(5));
  m.test_acc = sql::GetReal(st.getColumn(6));
  m.train_loss = sql::GetReal(st.getColumn(7));
  m.test_loss = sql::GetReal(st.getColumn(8));
  m.n_epochs = st.getColumn(9).getInt64();
  m.has_weights = st.getColumn(10).getInt() != 0;
  m.weights_sha256 = sql::GetText(st.getColumn(11));
  m.param_count = st.getColumn(12).getInt64();
  m.wall_time_s = sql::GetReal(st.getColumn(13));
  m.fingerprint_json = sql::GetText(st.getColumn(14));
  m.threads = st.getColumn(15).getInt();
  m.h5_file = sql::GetText(st.getColumn(16));
  m.h5_group = sql::GetText(st.getColumn(17));
  return m;
}

void AttachModels(SQLite::Database& db, std::vector<TrialRow>& trials) {
  SQLite::Statement st(
      db, std::string(kModelSelect) + " WHERE m.trial_id = ? ORDER BY m.idx");
  for (TrialRow& t : trials) {
    st.reset();
    st.bind(1, t.id);
    while (st.executeStep()) t.models.push_back(ReadModelColumns(st));
  }
}

Result<std::vector<TrialRow>> SelectTrials(
    const Dataset::Impl& impl, const std::string& select,
    const std::vector<sql::Param>& params) {
  std::vector<TrialRow> rows;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db, select);
    sql::BindAll(st, params);
    while (st.executeStep()) rows.push_back(ReadTrialColumns(st));
    AttachModels(*impl.db, rows);
    return Status::OK();
  }));
  return rows;
}

}  // namespace xw
