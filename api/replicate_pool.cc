#include "replicate_pool.h"

namespace xw::replicate_pool {

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
    d.result = ToReplicaRecord(s.trial.id, s.trial.models[j.model].profile, family_name, *r,
                               keep_weights);
  }
  return d;
}

}  // namespace xw::replicate_pool
