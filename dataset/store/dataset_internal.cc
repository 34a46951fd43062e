// The store's internal Dataset interface (dataset_internal.h) on Dataset's
// state (dataset_impl.h).
#include "dataset_internal.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "dataset_impl.h"
#include "sqlite_adapter.h"

namespace xw::internal {

Result<std::map<int64_t, std::string>> ModelProfileDefinitions(
    const Dataset& ds) {
  std::map<int64_t, std::string> out;
  const Dataset::Impl& impl = ds.impl();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         "SELECT m.id, pr.json FROM models m JOIN profiles pr "
                         "ON pr.id = m.profile_id");
    while (st.executeStep())
      out[st.getColumn(0).getInt64()] = sql::GetText(st.getColumn(1));
    return Status::OK();
  }));
  return out;
}

Result<std::vector<TrialRow>> AllTrials(const Dataset& ds) {
  return SelectTrials(
      ds.impl(),
      std::string("SELECT ") + kTrialColumns + " FROM trials t ORDER BY t.id",
      {});
}

Result<TrialRecord> RecordFromRow(
    const Dataset& ds, const TrialRow& row,
    const std::map<int64_t, std::string>& profiles, bool curves, bool weights) {
  TrialRecord t;
  t.arch = row.arch;
  t.data_spec = row.data_spec;
  t.hparams_json = row.hparams_json;
  t.extra_json = row.extra_json;
  t.lr = row.lr;
  t.adam_eps = row.adam_eps;
  t.beta1 = row.beta1;
  t.beta2 = row.beta2;
  t.weight_decay = row.weight_decay;
  t.batch_size = row.batch_size.value_or(0);
  t.epochs = row.epochs.value_or(0);
  t.seed = row.seed;
  t.divergence = row.divergence;
  t.search_id = row.search_id;
  t.provenance = row.provenance;
  t.external_id = row.external_id;
  for (const ModelRow& r : row.models) {
    ModelRecord m;
    m.profile = r.profile;
    auto it = profiles.find(r.id);
    m.profile_json = it == profiles.end() ? "" : it->second;
    m.external = r.external;
    m.status = r.status;
    m.train_acc = r.train_acc;
    m.test_acc = r.test_acc;
    m.train_loss = r.train_loss;
    m.test_loss = r.test_loss;
    if (curves && !r.h5_file.empty()) {
      XW_ASSIGN_OR_RETURN(m.curves, ds.LoadCurves(r.id));
    }
    if (weights && r.has_weights) {
      XW_ASSIGN_OR_RETURN(m.weights, ds.LoadWeights(r.id));
    }
    m.weights_sha256 = r.has_weights ? r.weights_sha256 : "";
    m.param_count = r.param_count;
    m.wall_time_s = r.wall_time_s;
    m.fingerprint_json = r.fingerprint_json;
    m.threads = r.threads;
    t.models.push_back(std::move(m));
  }
  return t;
}

}  // namespace xw::internal
