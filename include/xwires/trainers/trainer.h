// The training loop: one architecture, one data set, one set of
// hyperparameters, trained under one numerics profile (TrainProfile) or under
// several from the same data and the same starting point (TrainTrial).
//
// Each step reads top to bottom: gather the batch -> forward (training mode)
// -> softmax cross-entropy -> backward -> Adam step -> metrics. Batches walk
// the training set in order (reshuffled per epoch when the profile says so);
// any batch size from 1 up is accepted and the last partial batch is kept.
// After every epoch the whole test set is evaluated in eval mode: test
// accuracy = correct / total, test loss = mean per-sample loss.
// A non-finite training loss stops the run before the update is applied: the
// model is marked "diverged" and evaluated as it stands.
//
// Determinism: the result (and weights_sha256) is a pure function of profile,
// data, options and seed; the thread count changes only the speed.
// Thread-safety: TrainProfile may run concurrently on distinct inputs (each
// call sets its own thread count with xw::ThreadScope), except that progress
// callbacks run on the calling thread.
#ifndef XWIRES_TRAINERS_TRAINER_H_
#define XWIRES_TRAINERS_TRAINER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/dataset/store/run_record.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/model.h"
#include "xwires/trainers/optimizer.h"
#include "xwires/trainers/profile.h"

namespace xw {

// Reported after every training batch and after every epoch's evaluation.
struct TrainProgress {
  std::string profile;
  int64_t epoch = 0, epochs = 0;     // 1-based epoch
  int64_t batch = 0, batches = 0;    // 1-based batch within the epoch
  int64_t images_done = 0, images_total = 0;  // over the whole run
  double elapsed_s = 0, images_per_s = 0, eta_s = 0;
  double loss = 0;                   // last batch's loss
  bool epoch_end = false;            // set once per epoch, after the test pass
  EpochMetrics metrics;              // valid when epoch_end
};

struct TrainOptions {
  std::string arch = "simple_cnn";
  ArchOptions arch_options;
  int64_t epochs = 1;       // >= 1
  int64_t batch_size = 32;  // >= 1
  AdamOptions adam;
  uint64_t seed = 0;        // init, dropout and shuffle draws (per-profile streams)
  // Seed the caller drew the synthetic data with, when it is not `seed`
  // (recorded only: the data arrive loaded). DataSeed() resolves it.
  std::optional<uint64_t> data_seed;
  int threads = 0;          // 0: all hardware threads
  int64_t eval_batch_size = 256;
  // When set, every profile starts from these tensors (matched by name,
  // Model::LoadState) instead of its own initialiser. Borrowed.
  const NamedTensors* init_weights = nullptr;
  std::string init_weights_source;  // for messages and the record
  // Called once with the model after its initialisation (or init_weights
  // load) and before the first step; an error stops the run with it.
  // Replicas (replica.h) move one weight here. Runs on the training thread.
  std::function<Status(Model&)> after_init;
  std::string data_spec = "synthetic";  // recorded only
  int64_t train_limit = -1, test_limit = -1;  // recorded only
  std::function<void(const TrainProgress&)> on_progress;
  // Polled on the training thread before every batch and before each
  // epoch's test pass; when it returns true the run stops there and
  // TrainProfile returns Cancelled (nothing is produced). Lets a caller stop
  // a run cleanly (Ctrl-C in Python, a search being interrupted).
  std::function<bool()> should_stop;
  // Called on the training thread after every Adam step with the 1-based
  // step number and the model as the step left it (ExportState() gives
  // every weight and buffer), e.g. to compare each step with another
  // framework (api/conformance.h). A failed Status stops the run and
  // TrainProfile returns it. The model must not be changed.
  std::function<Status(int64_t step, const Model& model)> on_step;
  // Conformance only (api/conformance.h): called with every ReLU output of
  // the training forward passes (never evaluation or prediction), in graph
  // order, right after it is written; ctx.step is the 1-based batch. It may
  // edit y in place to align a ReLU's decision with another framework's
  // (ReluShadowHook, module.h). Empty, the default: no call, no cost.
  ReluShadowHook relu_shadow;
};

// The seed of the run's synthetic data: data_seed when set, else seed (the
// default: `--seed` draws both).
inline uint64_t DataSeed(const TrainOptions& o) { return o.data_seed.value_or(o.seed); }

// InvalidArgument naming the offending option (epochs, batch_size, adam.*,
// threads, eval_batch_size, architecture options).
Status ValidateTrainOptions(const TrainOptions& options);

struct TrainResult {
  // profile, profile_json, status ("ok" | "diverged"), final accuracies and
  // losses (of the last epoch, or as the model stood when it diverged),
  // curves, weights (state_dict order), weights_sha256, param_count,
  // wall_time_s, fingerprint_json, threads.
  ModelRecord record;
  int64_t steps = 0;           // Adam steps taken (skipped ones excluded)
  int64_t diverged_step = -1;  // 1-based batch whose loss was not finite
  // Dynamic loss scaling (profile.loss_scaling): steps skipped for
  // non-finite gradients and the scale after the last batch (1 when none).
  LossScaling loss_scaling = LossScaling::kNone;
  int64_t skipped_steps = 0;
  double final_loss_scale = 1.0;
  // Argmax class of every test example after the last evaluation (test
  // order), as uint8; empty when the data have more than 256 classes.
  std::vector<uint8_t> test_predictions;
};

// Trains one model. Errors: bad options, data whose image shape does not fit
// the architecture, an empty training or test set, init weights that do not
// match the architecture; Cancelled when options.should_stop asked to stop.
Result<TrainResult> TrainProfile(const Profile& profile, const DataSplits& data,
                                 const TrainOptions& options);

// Trains each profile in turn (each with options.threads threads) from the
// same data and options. models[i] follows profiles[i]; divergence is
// |test_acc[0] - test_acc[1]| when there are exactly two models, else the
// largest pairwise difference. hparams_json records every option.
Result<TrialRecord> TrainTrial(const std::vector<Profile>& profiles, const DataSplits& data,
                               const TrainOptions& options);

// Loss and accuracy of `model` in eval mode over a whole data set, in
// batches of batch_size: accuracy = correct / total, loss = mean per-sample
// loss. A prediction is the first index of the largest logit, NaN counting
// as largest (torch.argmax). When `predictions` is not null it receives every
// example's predicted class (data order; classes must be <= 256).
struct EvalResult {
  double loss = 0, accuracy = 0;
  int64_t correct = 0, total = 0;
};
Result<EvalResult> Evaluate(Model& model, const Profile& profile, const ImageDataset& data,
                            int64_t batch_size, std::vector<uint8_t>* predictions = nullptr);

// Logits [N, classes] of `model` in eval mode for images x [N, C, H, W].
Result<Tensor> Predict(Model& model, const Profile& profile, const Tensor& x,
                       int64_t batch_size = 256);

// The index of the largest of k values (first on ties; NaN wins).
int ArgMax(const float* v, int k);

}  // namespace xw

#endif  // XWIRES_TRAINERS_TRAINER_H_
