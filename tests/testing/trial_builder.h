// A trial record for tests that store trials without training: a pair (or
// more) of models trained with Adam on the synthetic data, each model named
// by its profile. Tests set the fields they check on the returned record.
#ifndef XWIRES_TESTS_TESTING_TRIAL_BUILDER_H_
#define XWIRES_TESTS_TESTING_TRIAL_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/dataset/store/run_record.h"

namespace xw::testutil {

// What BaseTrial fills in; each default is the one most tests use.
struct BaseTrialOptions {
  std::string arch = "mlp";
  int64_t seed = 1;
  double lr = 0.01;
  double adam_eps = 1e-7;
  int64_t epochs = 1;
  std::vector<std::string> profiles = {"torch", "tf"};
  std::string provenance = "";  // none recorded
};

// A trial of o.arch on data_spec "synthetic" with o's seed, lr, adam_eps and
// epochs, Adam's betas (0.9, 0.999), no weight decay, batch size 32, and one
// model per profile, in order: its name, profile_json {"name": "<profile>"},
// status "ok" and every metric unknown. No hparams_json, divergence, search
// or weights.
TrialRecord BaseTrial(const BaseTrialOptions& o = {});

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_TRIAL_BUILDER_H_
