// The trainer- and search-aware checks `xwires bundle verify/import` hand to
// the dataset module (xw::BundleCheckers): profile definitions load as
// profiles, hyperparameters lie in the bundle's search space, and replay
// re-trains a trial with the trainer.
#ifndef XWIRES_API_CLI_BUNDLE_CHECKERS_H_
#define XWIRES_API_CLI_BUNDLE_CHECKERS_H_

#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/run_record.h"

namespace xw::cli {

struct ReplaySettings {
  int threads = 0;        // per training; results do not depend on it
  std::string data_spec;  // replaces the trials' data spec when set (e.g.
                          // CIFAR stored under another path here)
};

// Checkers for VerifyBundle / ImportBundle. The replay checker loads each data
// spec once and keeps it for the checker's lifetime; not thread-safe.
BundleCheckers MakeBundleCheckers(const ReplaySettings& settings);

// The TrainTrial call that reproduces `trial`: options from its
// hyperparameters (hparams_json as written by HparamsJson), profiles from
// its models' definitions (external models are left out), data from its
// data spec (or settings.data_spec). FailedPrecondition when the trial cannot
// be replayed (no definitions, trained from --init-weights, no recorded
// seed).
Result<TrialRecord> RetrainTrial(const TrialRecord& trial,
                                 const ReplaySettings& settings);

}  // namespace xw::cli

#endif  // XWIRES_API_CLI_BUNDLE_CHECKERS_H_
