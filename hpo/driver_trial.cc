// One trial of the divergence search: train the pair, measure the objective.
#include <cmath>
#include <nlohmann/json.hpp>

#include "driver_internal.h"
#include "xwires/core/parallel.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::hpo::internal {
namespace {

// NaN is written as null so that extra_json stays valid JSON.
nlohmann::json JsonNumber(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

Result<std::vector<int32_t>> PredictTestLabels(const TrialContext& ctx,
                                               const TrainOptions& o,
                                               const Profile& profile,
                                               const NamedTensors& weights) {
  XW_ASSIGN_OR_RETURN(auto model,
                      BuildModel(o.arch, ctx.input, o.arch_options));
  XW_RETURN_IF_ERROR(model->LoadState(weights, "model " + profile.name));
  XW_ASSIGN_OR_RETURN(
      Tensor logits,
      Predict(*model, profile, ctx.data.test.images, o.eval_batch_size));
  const int64_t n = logits.dim(0);
  const int k = static_cast<int>(logits.dim(1));
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; ++i) labels[i] = ArgMax(logits.data() + i * k, k);
  return labels;
}

double Objectives::Get(Objective o) const {
  switch (o) {
    case Objective::kAbsAccDiff:
    case Objective::kSignificantDiff:  // a screened pair: K = 1
      return abs_acc_diff;
    case Objective::kDisagreement:
      return disagreement;
    case Objective::kMaxClassGap:
      return max_class_gap;
  }
  return abs_acc_diff;
}

Result<TrialContext> PrepareTrials(const DriverConfig& c) {
  TrialContext ctx;
  ctx.config = c;
  for (const std::string& name : c.search.profiles) {
    auto p = LoadProfile(name);
    if (!p.ok()) return p.status().WithContext("search config: profiles");
    ctx.profiles.push_back(std::move(p).value());
  }
  if (ctx.profiles[0].name == ctx.profiles[1].name &&
      ctx.profiles[0].json == ctx.profiles[1].json) {
    return Status::InvalidArgument(
        "search config: profiles: both are '" + ctx.profiles[0].name +
        "'; a divergence search compares two different profiles");
  }
  if (ctx.profiles[0].name == ctx.profiles[1].name) {
    return Status::InvalidArgument(
        "search config: profiles: two different profiles are both named '" +
        ctx.profiles[0].name + "'");
  }
  DataOptions d;
  d.train_limit = c.search.train_limit;
  d.test_limit = c.search.test_limit;
  d.seed = c.train.data_seed.value_or(c.train.seed);
  XW_ASSIGN_OR_RETURN(ctx.data, LoadDataSpec(c.search.data, d));
  const ImageDataset& train = ctx.data.train;
  ctx.input = InputSpec{train.channels(), train.height(), train.width(),
                        train.num_classes};
  // The architecture must fit the data before any trial starts.
  auto model = BuildModel(c.search.arch, ctx.input, c.train.arch_options);
  if (!model.ok()) return model.status().WithContext("search config: arch");
  // So must the shared starting weights.
  if (!c.train.init_weights.empty()) {
    auto init = ReadTensorFile(c.train.init_weights);
    if (!init.ok())
      return init.status().WithContext("search config: train.init_weights");
    ctx.init = std::move(init).value();
    Status st = (*model)->LoadState(ctx.init, c.train.init_weights);
    if (!st.ok()) return st.WithContext("search config: train.init_weights");
  }
  return ctx;
}

double DisagreementRate(const std::vector<int32_t>& a,
                        const std::vector<int32_t>& b) {
  if (a.empty() || a.size() != b.size()) return std::nan("");
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  return static_cast<double>(differ) / static_cast<double>(a.size());
}

double MaxClassGap(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                   const std::vector<int32_t>& labels, int num_classes) {
  if (a.size() != labels.size() || b.size() != labels.size() ||
      num_classes < 1) {
    return std::nan("");
  }
  std::vector<int64_t> total(num_classes, 0), right_a(num_classes, 0),
      right_b(num_classes, 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    const int c = labels[i];
    if (c < 0 || c >= num_classes) continue;
    ++total[c];
    right_a[c] += a[i] == c;
    right_b[c] += b[i] == c;
  }
  double gap = 0;
  for (int c = 0; c < num_classes; ++c) {
    if (total[c] == 0)
      continue;  // a class absent from the test set has no accuracy
    gap = std::max(gap, std::fabs(static_cast<double>(right_a[c] - right_b[c]) /
                                  static_cast<double>(total[c])));
  }
  return gap;
}

Result<Objectives> ComputeObjectives(const TrialContext& ctx,
                                     const TrainOptions& o,
                                     const TrialRecord& pair,
                                     Objective objective, bool all) {
  if (pair.models.size() != 2)
    return Status::Internal("a trial must hold exactly two models");
  Objectives obj{std::fabs(pair.models[0].test_acc - pair.models[1].test_acc),
                 std::nan(""), std::nan("")};
  if (!all && (objective == Objective::kAbsAccDiff ||
               objective == Objective::kSignificantDiff)) {
    return obj;
  }
  ThreadScope scope(o.threads);
  std::vector<int32_t> pred[2];
  for (int i = 0; i < 2; ++i) {
    XW_ASSIGN_OR_RETURN(pred[i], PredictTestLabels(ctx, o, ctx.profiles[i],
                                                   pair.models[i].weights));
  }
  obj.disagreement = DisagreementRate(pred[0], pred[1]);
  obj.max_class_gap = MaxClassGap(pred[0], pred[1], ctx.data.test.labels,
                                  ctx.data.test.num_classes);
  return obj;
}

Result<TrialRecord> RunTrial(const TrialContext& ctx,
                             const std::vector<double>& x, int threads,
                             std::function<bool()> should_stop) {
  TrainOptions o = TrialTrainOptions(ctx.config, x, threads);
  o.should_stop = std::move(should_stop);
  if (!ctx.init.empty()) o.init_weights = &ctx.init;
  XW_ASSIGN_OR_RETURN(TrialRecord r, TrainTrial(ctx.profiles, ctx.data, o));
  const Objective objective = ctx.config.search.objective;
  XW_ASSIGN_OR_RETURN(Objectives obj,
                      ComputeObjectives(ctx, o, r, objective, false));
  r.divergence = obj.Get(objective);
  nlohmann::json extra = {{"objectives",
                           {{"abs_acc_diff", JsonNumber(obj.abs_acc_diff)},
                            {"disagreement", JsonNumber(obj.disagreement)},
                            {"max_class_gap", JsonNumber(obj.max_class_gap)}}}};
  const auto trained = nlohmann::json::parse(r.extra_json.empty() ? "{}" : r.extra_json, nullptr,
                                             /*allow_exceptions=*/false);
  // TrainTrial's facts (loss scaling under fp16 profiles, the degenerate-model
  // facts of degenerate.h) are kept.
  for (const char* key : {"loss_scaling", "test_set", "loss_peak"}) {
    if (trained.is_object() && trained.contains(key)) extra[key] = trained[key];
  }
  r.extra_json = extra.dump();
  if (!ctx.config.train.store_weights) {
    for (ModelRecord& m : r.models) {
      if (m.weights_sha256.empty()) m.weights_sha256 = WeightsSha256(m.weights);
      m.weights.clear();
    }
  }
  return r;
}

}  // namespace xw::hpo::internal
