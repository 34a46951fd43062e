// The training loop (see trainer.h): data -> forward -> loss -> backward ->
// Adam step -> metrics, one batch at a time.
#include "xwires/trainers/trainer.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <utility>

#include <nlohmann/json.hpp>

#include "xwires/core/build_info.h"
#include "xwires/core/loss.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"
#include "xwires/dataset/store/degenerate.h"
#include "xwires/trainers/loss_scaler.h"
#include "xwires/trainers/metrics.h"

namespace xw {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Images [start, start + n) of a [N, C, H, W] tensor into *out.
void CopySamples(const Tensor& images, int64_t start, int64_t n, Tensor* out) {
  const int64_t per = images.dim(1) * images.dim(2) * images.dim(3);
  out->Resize({n, images.dim(1), images.dim(2), images.dim(3)});
  std::memcpy(out->data(), images.data() + start * per, sizeof(float) * n * per);
}

// Counts correct predictions; appends each example's class to *predicted
// when it is not null.
int64_t CountCorrect(const Tensor& logits, const int32_t* labels,
                     std::vector<uint8_t>* predicted = nullptr) {
  const int64_t n = logits.dim(0);
  const int k = static_cast<int>(logits.dim(1));
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int c = ArgMax(logits.data() + i * k, k);
    correct += c == labels[i];
    if (predicted != nullptr) predicted->push_back(static_cast<uint8_t>(c));
  }
  return correct;
}

// The order in which an epoch visits the training set: file order, or a
// Fisher-Yates permutation drawn from the profile's "shuffle" stream.
void EpochOrder(const Profile& profile, uint64_t seed, int64_t epoch, std::vector<int64_t>* order) {
  std::iota(order->begin(), order->end(), int64_t{0});
  if (!profile.shuffle) return;
  const Philox rng(seed, MixStream(StreamId(profile.rng_stream + "/shuffle"),
                                   static_cast<uint64_t>(epoch)));
  for (int64_t i = static_cast<int64_t>(order->size()) - 1; i > 0; --i) {
    const uint64_t j = (static_cast<uint64_t>(rng.U32(2 * i)) << 32 | rng.U32(2 * i + 1)) %
                       static_cast<uint64_t>(i + 1);
    std::swap((*order)[i], (*order)[j]);
  }
}

InputSpec InputOf(const ImageDataset& ds) {
  InputSpec in;
  in.channels = ds.channels();
  in.height = ds.height();
  in.width = ds.width();
  in.num_classes = ds.num_classes;
  return in;
}

// The machine fingerprint, plus "isa_dependent": true where the profile's
// kernels are not exact-order (gemm "eigen": Eigen's sgemm, whose blocking
// and packet FMAs follow the build's -march and the dispatched target), so
// that such a model's bits are known to belong to its kernel_target.
std::string ModelFingerprintJson(const Profile& profile, int threads) {
  std::string fp = MachineFingerprintJson(threads);
  if (SameBitsOnEveryIsa(profile.kernels)) return fp;
  nlohmann::json j = nlohmann::json::parse(fp, nullptr, false);
  if (!j.is_object()) return fp;
  j["isa_dependent"] = true;
  return j.dump();
}

Status Stopped() { return Status::Cancelled("training was stopped"); }

Status CheckData(const DataSplits& data) {
  if (data.train.size() == 0 || data.train.images.rank() != 4) {
    return Status::InvalidArgument("the training set is empty");
  }
  if (data.test.size() == 0 || data.test.images.rank() != 4) {
    return Status::InvalidArgument("the test set is empty");
  }
  for (int d = 1; d < 4; ++d) {
    if (data.train.images.dim(d) != data.test.images.dim(d)) {
      return Status::InvalidArgument("train images " + ShapeToString(data.train.images.shape()) +
                                     " and test images " +
                                     ShapeToString(data.test.images.shape()) + " differ in shape");
    }
  }
  return Status::OK();
}

}  // namespace

int ArgMax(const float* v, int k) {
  int best = 0;
  for (int j = 0; j < k; ++j) {
    if (std::isnan(v[j])) return j;
    if (v[j] > v[best]) best = j;
  }
  return best;
}

Status ValidateTrainOptions(const TrainOptions& o) {
  if (o.epochs < 1) return Status::InvalidArgument("epochs must be >= 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 1) {
    return Status::InvalidArgument("batch_size must be >= 1, got " + std::to_string(o.batch_size));
  }
  if (o.eval_batch_size < 1) return Status::InvalidArgument("eval_batch_size must be >= 1");
  if (o.threads < 0) return Status::InvalidArgument("threads must be >= 0 (0 = all)");
  return ValidateAdamOptions(o.adam);
}

Result<EvalResult> Evaluate(Model& model, const Profile& profile, const ImageDataset& data,
                            int64_t batch_size, std::vector<uint8_t>* predictions) {
  if (predictions != nullptr) {
    if (data.num_classes > 256) {
      return Status::InvalidArgument("per-example predictions are uint8: " +
                                     std::to_string(data.num_classes) + " classes do not fit");
    }
    predictions->clear();
    predictions->reserve(static_cast<size_t>(data.size()));
  }
  RunContext ctx = RunContext::ForProfile(profile);
  EvalResult r;
  double loss_sum = 0;
  Tensor x;
  std::vector<float> per_sample;
  for (int64_t start = 0; start < data.size(); start += batch_size) {
    const int64_t n = std::min(batch_size, data.size() - start);
    CopySamples(data.images, start, n, &x);
    XW_ASSIGN_OR_RETURN(const Tensor* logits, model.Forward(x, ctx));
    const int32_t* labels = data.labels.data() + start;
    auto loss = SoftmaxCrossEntropy(*logits, labels, profile.loss, profile.kernels.reduce,
                                    nullptr, &per_sample);
    if (!loss.ok()) return loss.status();
    for (float l : per_sample) loss_sum += l;
    r.correct += CountCorrect(*logits, labels, predictions);
  }
  r.total = data.size();
  r.accuracy = r.total ? static_cast<double>(r.correct) / r.total : 0.0;
  r.loss = r.total ? loss_sum / r.total : 0.0;
  return r;
}

Result<Tensor> Predict(Model& model, const Profile& profile, const Tensor& x, int64_t batch_size) {
  if (x.rank() != 4) {
    return Status::InvalidArgument("input must be [N, C, H, W], got " + ShapeToString(x.shape()));
  }
  RunContext ctx = RunContext::ForProfile(profile);
  Tensor out({x.dim(0), model.num_classes()});
  Tensor batch;
  for (int64_t start = 0; start < x.dim(0); start += batch_size) {
    const int64_t n = std::min(batch_size, x.dim(0) - start);
    CopySamples(x, start, n, &batch);
    XW_ASSIGN_OR_RETURN(const Tensor* logits, model.Forward(batch, ctx));
    std::memcpy(out.data() + start * model.num_classes(), logits->data(),
                sizeof(float) * logits->size());
  }
  return out;
}

Result<TrainResult> TrainProfile(const Profile& profile, const DataSplits& data,
                                 const TrainOptions& options) {
  XW_RETURN_IF_ERROR(ValidateTrainOptions(options));
  XW_RETURN_IF_ERROR(CheckData(data));
  const auto start_time = Clock::now();
  ThreadScope threads(options.threads);

  // Model and its starting point.
  XW_ASSIGN_OR_RETURN(auto model, BuildModel(options.arch, InputOf(data.train), options.arch_options));
  if (options.init_weights != nullptr) {
    XW_RETURN_IF_ERROR(model->LoadState(*options.init_weights, options.init_weights_source));
  } else {
    XW_RETURN_IF_ERROR(model->Initialize(profile, options.seed));
  }
  if (options.after_init) XW_RETURN_IF_ERROR(options.after_init(*model));
  Adam adam(options.adam, profile);
  RunContext ctx = RunContext::ForProfile(profile);
  ctx.seed = options.seed;
  if (options.relu_shadow) ctx.relu_shadow = &options.relu_shadow;
  LossScaler scaler(profile.loss_scaling);
  int64_t iteration = 0;  // batches trained, skipped steps included

  TrainResult result;
  ModelRecord& rec = result.record;
  rec.profile = profile.name;
  rec.profile_json = profile.json;
  rec.param_count = model->ParameterCount();
  rec.threads = options.threads == 0 ? HardwareThreads() : options.threads;

  const ImageDataset& train = data.train;
  const int64_t n = train.size(), bs = std::min(options.batch_size, n);
  const int64_t batches = (n + bs - 1) / bs;
  std::vector<int64_t> order(n);
  Tensor xb, dlogits;
  std::vector<int32_t> yb;
  TrainProgress progress;
  progress.profile = profile.name;
  progress.epochs = options.epochs;
  progress.batches = batches;
  progress.images_total = n * options.epochs;

  for (int64_t epoch = 1; epoch <= options.epochs && rec.status == "ok"; ++epoch) {
    EpochOrder(profile, options.seed, epoch, &order);
    EpochMetrics em;
    em.epoch = static_cast<int>(epoch);
    double loss_sum = 0;
    int64_t correct = 0, seen = 0, done_batches = 0;
    for (int64_t b = 0; b < batches; ++b) {
      if (options.should_stop && options.should_stop()) return Stopped();
      // data
      const int64_t first = b * bs, count = std::min(bs, n - first);
      GatherBatch(train, order.data() + first, count, &xb, &yb);
      // forward
      ctx.training = true;
      ctx.step = ++iteration;
      XW_ASSIGN_OR_RETURN(const Tensor* logits, model->Forward(xb, ctx));
      // loss
      XW_ASSIGN_OR_RETURN(float loss, SoftmaxCrossEntropy(*logits, yb.data(), profile.loss,
                                                          profile.kernels.reduce, &dlogits));
      correct += CountCorrect(*logits, yb.data());
      seen += count;
      loss_sum += loss;
      ++done_batches;
      em.train_loss_last = loss;
      if (!std::isfinite(loss)) {
        rec.status = "diverged";
        result.diverged_step = ctx.step;
        break;
      }
      // backward and Adam step. Mixed precision: the loss gradient (times the
      // loss scale) enters the graph in the logits' 16-bit dtype.
      if (scaler.enabled()) {
        for (int64_t i = 0; i < dlogits.size(); ++i) dlogits[i] = scaler.ScaleGradient(dlogits[i]);
      }
      RoundActivations(ctx, &dlogits);
      XW_RETURN_IF_ERROR(model->Backward(dlogits, ctx));
      bool take_step = true;
      if (scaler.enabled()) {
        // Unscale every gradient; any Inf/NaN skips the step (Adam's t,
        // moments and weights unchanged) and backs the scale off.
        bool finite = true;
        for (const StateEntry& e : model->state()) {
          if (e.grad != nullptr) {
            finite = scaler.UnscaleAndCheck(e.grad->data(), e.grad->size()) && finite;
          }
        }
        take_step = !scaler.Update(!finite);
      }
      if (take_step) {
        XW_RETURN_IF_ERROR(adam.Step(model->parameters(), model->gradients()));
        ++result.steps;
        if (options.on_step) XW_RETURN_IF_ERROR(options.on_step(result.steps, *model));
      }
      // progress
      if (options.on_progress) {
        progress.epoch = epoch;
        progress.batch = b + 1;
        progress.images_done += count;
        progress.elapsed_s = Seconds(start_time);
        progress.images_per_s = progress.images_done / std::max(progress.elapsed_s, 1e-9);
        progress.eta_s = (progress.images_total - progress.images_done) /
                         std::max(progress.images_per_s, 1e-9);
        progress.loss = loss;
        options.on_progress(progress);
      }
    }
    em.train_loss_mean = loss_sum / std::max<int64_t>(done_batches, 1);
    em.train_acc = seen ? static_cast<double>(correct) / seen : kUnknown;
    if (options.should_stop && options.should_stop()) return Stopped();
    // metrics: the whole test set in eval mode
    // Only the final evaluation keeps its per-example predictions: the last
    // epoch's, or the diverged epoch's.
    const bool last_eval = epoch == options.epochs || rec.status != "ok";
    std::vector<uint8_t>* keep =
        last_eval && data.test.num_classes <= 256 ? &result.test_predictions : nullptr;
    XW_ASSIGN_OR_RETURN(EvalResult test,
                        Evaluate(*model, profile, data.test, options.eval_batch_size, keep));
    em.test_loss = test.loss;
    em.test_acc = test.accuracy;
    rec.curves.push_back(em);
    if (options.on_progress) {
      progress.epoch_end = true;
      progress.metrics = em;
      options.on_progress(progress);
      progress.epoch_end = false;
    }
  }

  const EpochMetrics& last = rec.curves.back();
  rec.train_acc = last.train_acc;
  rec.train_loss = last.train_loss_mean;
  rec.test_acc = last.test_acc;
  rec.test_loss = last.test_loss;
  rec.weights = model->ExportState();
  rec.weights_sha256 = WeightsSha256(rec.weights);
  rec.wall_time_s = Seconds(start_time);
  rec.fingerprint_json = ModelFingerprintJson(profile, rec.threads);
  result.loss_scaling = profile.loss_scaling;
  result.skipped_steps = scaler.skipped_steps();
  result.final_loss_scale = scaler.scale();
  return result;
}

}  // namespace xw

namespace xw {

Result<TrialRecord> TrainTrial(const std::vector<Profile>& profiles, const DataSplits& data,
                               const TrainOptions& options) {
  if (profiles.empty()) return Status::InvalidArgument("no profiles to train");
  TrialRecord trial = TrialRecordFor(options);
  trial.provenance = "xwires train";
  // Per model under dynamic loss scaling: {"loss_scaling": {profile:
  // {"kind", "skipped_steps", "final_scale"}}} in the trial's extra facts.
  nlohmann::ordered_json scaling = nlohmann::ordered_json::object();
  for (const Profile& p : profiles) {
    auto r = TrainProfile(p, data, options);
    if (!r.ok()) return r.status().WithContext("profile " + p.name);
    if (r->loss_scaling != LossScaling::kNone) {
      scaling[p.name] = {{"kind", LossScalingName(r->loss_scaling)},
                         {"skipped_steps", r->skipped_steps},
                         {"final_scale", r->final_loss_scale}};
    }
    trial.models.push_back(std::move(r->record));
  }
  if (!scaling.empty()) {
    auto extra = nlohmann::ordered_json::parse(trial.extra_json.empty() ? "{}" : trial.extra_json,
                                               nullptr, /*allow_exceptions=*/false);
    if (!extra.is_object()) extra = nlohmann::ordered_json::object();
    extra["loss_scaling"] = scaling;
    trial.extra_json = extra.dump();
  }
  RecordDegeneracyFacts(&trial, data.test.num_classes, data.test.size());
  double div = 0;
  for (size_t i = 0; i < trial.models.size(); ++i) {
    for (size_t j = i + 1; j < trial.models.size(); ++j) {
      div = std::max(div, std::fabs(trial.models[i].test_acc - trial.models[j].test_acc));
    }
  }
  trial.divergence = trial.models.size() > 1 ? div : kUnknown;
  return trial;
}

}  // namespace xw
