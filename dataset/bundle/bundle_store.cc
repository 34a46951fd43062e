#include "bundle_store.h"

#include <set>

#include "bundle_trials.h"
#include "dataset/store/dataset_internal.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"

namespace xw::bundle {

Result<std::map<int64_t, std::string>> ModelProfiles(const Dataset& ds) {
  return internal::ModelProfileDefinitions(ds);
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

Result<std::map<std::string, int64_t>> StoredContentHashes(
    const Dataset& ds, const std::vector<TrialRecord>& candidates) {
  std::set<std::string> keys;
  for (const TrialRecord& t : candidates) keys.insert(TrialKeySha256(t));
  XW_ASSIGN_OR_RETURN(auto profiles, ModelProfiles(ds));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, ds.Query(TrialQuery{}));
  std::map<std::string, int64_t> out;
  for (const TrialRow& row : rows) {
    XW_ASSIGN_OR_RETURN(TrialRecord cheap,
                        RecordFromRow(ds, row, profiles, false, false));
    if (!keys.count(TrialKeySha256(cheap))) continue;
    XW_ASSIGN_OR_RETURN(TrialRecord full,
                        RecordFromRow(ds, row, profiles, true, false));
    out.emplace(TrialContentSha256(full), row.id);  // rows are in id order
  }
  return out;
}

}  // namespace xw::bundle
