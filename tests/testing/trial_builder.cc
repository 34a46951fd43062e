#include "testing/trial_builder.h"

namespace xw::testutil {

TrialRecord BaseTrial(const BaseTrialOptions& o) {
  TrialRecord t;
  t.arch = o.arch;
  t.data_spec = "synthetic";
  t.lr = o.lr;
  t.adam_eps = o.adam_eps;
  t.beta1 = 0.9;
  t.beta2 = 0.999;
  t.weight_decay = 0;
  t.batch_size = 32;
  t.epochs = o.epochs;
  t.seed = o.seed;
  t.provenance = o.provenance;
  for (const std::string& p : o.profiles) {
    ModelRecord m;
    m.profile = p;
    m.profile_json = "{\"name\": \"" + p + "\"}";
    t.models.push_back(std::move(m));
  }
  return t;
}

}  // namespace xw::testutil
