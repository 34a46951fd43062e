#include "replicate_pool.h"

namespace xw::replicate_pool {

ReplicaRecord ToRecord(const TrialSetup& s, size_t model, const std::string& family,
                       ReplicaResult& r, bool keep_weights) {
  ReplicaRecord rec;
  rec.trial_id = s.trial.id;
  rec.profile = s.trial.models[model].profile;
  rec.family = family;
  rec.replica = r.perturbation.replica;
  rec.params_json = r.perturbation.ParamsJson();
  ModelRecord& m = r.train.record;
  rec.status = m.status == "ok" ? "ok" : "diverged";
  rec.test_acc = m.test_acc;
  rec.test_loss = m.test_loss;
  rec.first_nonfinite_step = r.train.diverged_step;
  rec.curves = m.curves;
  rec.predictions = std::move(r.train.test_predictions);
  rec.weights_sha256 = m.weights_sha256;
  if (keep_weights) rec.weights = std::move(m.weights);
  rec.wall_time_s = m.wall_time_s;
  rec.fingerprint_json = m.fingerprint_json;
  return rec;
}

Done TrainJob(const std::vector<TrialSetup>& setups, const Job& j, PerturbFamily family,
              const std::string& family_name, bool keep_weights, int threads,
              std::function<bool()> stop) {
  Done d;
  d.job = j;
  const TrialSetup& s = setups[j.trial];
  TrainOptions o = s.options;
  o.threads = threads;
  if (!s.init_weights.empty()) o.init_weights = &s.init_weights;
  o.should_stop = std::move(stop);
  const auto start = std::chrono::steady_clock::now();
  auto r = TrainReplica(s.profiles[j.model], s.data, o, j.replica, family);
  d.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    d.result = r.status();
  } else {
    d.result = ToRecord(s, j.model, family_name, *r, keep_weights);
  }
  return d;
}

}  // namespace xw::replicate_pool
