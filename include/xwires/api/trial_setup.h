// A stored trial made runnable again: its training options (from
// hparams_json, as written by xw::HparamsJson), its data (the same spec,
// limits and seed the run used), its models' profiles (the stored
// definitions) and architecture input. Shared by compare and attribute.
//
// Plain data; functions are thread-safe with respect to distinct Datasets.
#ifndef XWIRES_API_TRIAL_SETUP_H_
#define XWIRES_API_TRIAL_SETUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {

struct TrialSetup {
  TrialRow trial;
  TrainOptions options;       // everything but callbacks and init weights
  NamedTensors init_weights;  // when the run started from a weights file
  DataSplits data;
  InputSpec input;
  std::vector<Profile> profiles;  // profiles[i] of trial.models[i]
};

// Parses a trial's hparams_json (keys of xw::HparamsJson; missing keys keep
// TrainOptions' defaults, typed trial columns fill lr/eps/betas/wd/batch
// size/epochs/seed when the JSON lacks them). InvalidArgument naming the key.
Result<TrainOptions> OptionsFromTrial(const TrialRow& trial);

// Loads everything needed to re-run or re-evaluate trial `trial_id`.
// `train_data` false loads only the test split's images (the train split is
// cut to one image; enough for the input shape). Errors: NotFound (trial),
// FailedPrecondition for a trial with fewer than two models, an external
// model (no profile definition: an imported result cannot be re-run) or a
// pending/failed trial; data-loading errors name the spec.
Result<TrialSetup> LoadTrialSetup(const Dataset& ds, int64_t trial_id,
                                  bool train_data);

// Index of the model trained under `profile` in setup.trial.models, or of
// the first (which = 0) / second (which = 1) model when `profile` is "".
// NotFound naming the profile.
Result<size_t> PickModel(const TrialRow& trial, const std::string& profile,
                         size_t which);

// The two models of a pair command (`op`: "compare", "attribute"): PickModel
// for sides a (which = 0) and b (which = 1); InvalidArgument "<op>: both
// sides name the same model" when they coincide.
Result<std::pair<size_t, size_t>> PickPair(const TrialRow& trial, const std::string& profile_a,
                                           const std::string& profile_b, const std::string& op);

// Builds the trial's architecture and loads stored model `index`'s weights
// (NamedTensors returned through *weights when not null).
Result<std::unique_ptr<Model>> LoadStoredModel(const Dataset& ds,
                                               const TrialSetup& setup,
                                               size_t index,
                                               NamedTensors* weights = nullptr);

// Builds the trial's architecture holding `weights` (strict load; errors are
// prefixed with `source`).
Result<std::unique_ptr<Model>> BuildWithWeights(const TrialSetup& setup,
                                                const NamedTensors& weights,
                                                const std::string& source);

}  // namespace xw

#endif  // XWIRES_API_TRIAL_SETUP_H_
