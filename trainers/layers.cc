// Leaf modules: each forward next to its backward, one kernel call apiece.
#include "xwires/trainers/layers.h"

#include <algorithm>

#include "xwires/core/accel_ops.h"
#include "xwires/core/activation.h"
#include "xwires/core/dense.h"
#include "xwires/core/dropout.h"
#include "xwires/core/rng.h"
#include "xwires/core/tensor_ops.h"

namespace xw {

namespace {
StateEntry Param(const std::string& name, ParamKind kind, Fans fans, Tensor* v, Tensor* g) {
  StateEntry e;
  e.info.name = name;
  e.info.kind = kind;
  e.info.fan_in = fans.fan_in;
  e.info.fan_out = fans.fan_out;
  e.value = v;
  e.grad = g;
  return e;
}
StateEntry Buffer(const std::string& name, ParamKind kind, Tensor* v, bool is_int64 = false) {
  StateEntry e = Param(name, kind, Fans{0, 0}, v, nullptr);
  e.is_int64 = is_int64;
  return e;
}
}  // namespace

// ---- Conv2d ----

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int kernel, int stride, int pad,
               bool bias)
    : kernel_(kernel), stride_(stride), pad_(pad), has_bias_(bias),
      weight_({out_channels, in_channels, kernel, kernel}),
      dweight_({out_channels, in_channels, kernel, kernel}) {
  if (bias) {
    bias_ = Tensor({out_channels});
    dbias_ = Tensor({out_channels});
  }
}

Conv2dSpec Conv2d::Spec(const RunContext& ctx) const {
  Conv2dSpec s;
  s.kernel_h = s.kernel_w = kernel_;
  s.stride = stride_;
  if (pad_ >= 0) {
    s.pad = pad_;
  } else if (ctx.same_padding == SamePadding::kSymmetric) {
    s.pad = (kernel_ - 1) / 2;
  } else {
    s.pad_mode = PadMode::kSame;
  }
  return s;
}

Result<const Tensor*> Conv2d::Forward(const Tensor& x, const RunContext& ctx) {
  const Conv2dSpec spec = Spec(ctx);
  auto geometry = MakeConvGeometry(x.shape(), weight_.shape(), spec);
  if (!geometry.ok()) return geometry.status();
  x_ = &x;
  AccelConv2dForward(x, weight_, has_bias_ ? &bias_ : nullptr, spec, ctx.kernels, ctx.accel,
                     &y_, &rounded_);
  RoundActivations(ctx, &y_);
  return &y_;
}

Result<Tensor*> Conv2d::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  // A random scatter order is keyed by (seed, step, this weight's name).
  AccelSpec accel = ctx.accel;
  accel.scatter_seed = ctx.seed;
  accel.scatter_step = static_cast<uint64_t>(ctx.step);
  accel.scatter_tensor = StreamId(name_);
  AccelConv2dBackward(*x_, weight_, dy, Spec(ctx), ctx.kernels, accel, need_dx ? &dx_ : nullptr,
                      &dweight_, has_bias_ ? &dbias_ : nullptr, &rounded_);
  if (need_dx) RoundActivations(ctx, &dx_);
  RoundActivations(ctx, &dweight_);  // the 16-bit weight's gradient, upcast exactly
  if (has_bias_) RoundActivations(ctx, &dbias_);
  return need_dx ? &dx_ : nullptr;
}

void Conv2d::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  const Fans fans = ConvFans(weight_.dim(0), weight_.dim(1), kernel_, kernel_);
  name_ = prefix + "weight";
  out->push_back(Param(prefix + "weight", ParamKind::kConvWeight, fans, &weight_, &dweight_));
  if (has_bias_) {
    out->push_back(Param(prefix + "bias", ParamKind::kConvBias, fans, &bias_, &dbias_));
  }
}

// ---- Linear ----

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : in_(in_features), out_(out_features), has_bias_(bias),
      weight_({out_features, in_features}), dweight_({out_features, in_features}) {
  if (bias) {
    bias_ = Tensor({out_features});
    dbias_ = Tensor({out_features});
  }
}

Result<const Tensor*> Linear::Forward(const Tensor& x, const RunContext& ctx) {
  if (x.rank() < 2 || x.size() != x.dim(0) * in_) {
    return Status::InvalidArgument("linear layer expects [N, " + std::to_string(in_) +
                                   "] input, got " + ShapeToString(x.shape()));
  }
  x_ = &x;
  AccelDenseForward(x, weight_, has_bias_ ? &bias_ : nullptr, ctx.kernels, ctx.accel, &y_);
  RoundActivations(ctx, &y_);
  return &y_;
}

Result<Tensor*> Linear::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  AccelDenseBackward(*x_, weight_, dy, ctx.kernels, ctx.accel, need_dx ? &dx_ : nullptr,
                     &dweight_, has_bias_ ? &dbias_ : nullptr);
  if (need_dx) RoundActivations(ctx, &dx_);
  RoundActivations(ctx, &dweight_);
  if (has_bias_) RoundActivations(ctx, &dbias_);
  return need_dx ? &dx_ : nullptr;
}

void Linear::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  const Fans fans = LinearFans(out_, in_);
  out->push_back(Param(prefix + "weight", ParamKind::kLinearWeight, fans, &weight_, &dweight_));
  if (has_bias_) {
    out->push_back(Param(prefix + "bias", ParamKind::kLinearBias, fans, &bias_, &dbias_));
  }
}

// ---- BatchNorm2d ----

BatchNorm2d::BatchNorm2d(int64_t channels)
    : channels_(channels), weight_({channels}, 1.0f), bias_({channels}),
      running_mean_({channels}), running_var_({channels}, 1.0f),
      num_batches_tracked_(Shape{}), dweight_({channels}), dbias_({channels}) {}

Result<const Tensor*> BatchNorm2d::Forward(const Tensor& x, const RunContext& ctx) {
  if (ctx.training) {
    XW_RETURN_IF_ERROR(ForwardFused(x, ctx, BatchNormEpilogue{}, &y_).status());
  } else {
    x_ = &x;
    XW_RETURN_IF_ERROR(
        BatchNormForwardEval(x, weight_, bias_, running_mean_, running_var_, ctx.bn, &y_));
  }
  // fp32 statistics and normalisation, output in the input's 16-bit dtype.
  RoundActivations(ctx, &y_);
  return &y_;
}

Result<const Tensor*> BatchNorm2d::ForwardFused(
    const Tensor& x, const RunContext& ctx, const BatchNormEpilogue& epilogue,
    Tensor* out) {
  if (!ctx.training) {
    return Status::InvalidArgument(
        "BatchNorm2d::ForwardFused: training mode only");
  }
  if (out == nullptr)
    return Status::InvalidArgument("BatchNorm2d::ForwardFused: null output");
  x_ = &x;
  XW_RETURN_IF_ERROR(
      BatchNormForwardTrain(x, weight_, bias_, ctx.bn, ctx.kernels.reduce, out,
                            &running_mean_, &running_var_, &cache_, epilogue));
  num_batches_tracked_[0] += 1.0f;
  return out;
}

Result<Tensor*> BatchNorm2d::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  XW_RETURN_IF_ERROR(BatchNormBackward(*x_, weight_, dy, cache_, ctx.kernels.reduce,
                                       need_dx ? &dx_ : nullptr, &dweight_, &dbias_));
  if (need_dx) RoundActivations(ctx, &dx_);  // parameter gradients stay fp32
  return need_dx ? &dx_ : nullptr;
}

void BatchNorm2d::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  const Fans none{0, 0};
  out->push_back(Param(prefix + "weight", ParamKind::kBnWeight, none, &weight_, &dweight_));
  out->push_back(Param(prefix + "bias", ParamKind::kBnBias, none, &bias_, &dbias_));
  out->push_back(Buffer(prefix + "running_mean", ParamKind::kBnRunningMean, &running_mean_));
  out->push_back(Buffer(prefix + "running_var", ParamKind::kBnRunningVar, &running_var_));
  out->push_back(Buffer(prefix + "num_batches_tracked", ParamKind::kBuffer,
                        &num_batches_tracked_, /*is_int64=*/true));
}

// ---- ReLU ----

Result<const Tensor*> ReLU::Forward(const Tensor& x, const RunContext& ctx) {
  XW_RETURN_IF_ERROR(ReluForward(x, &y_));
  XW_RETURN_IF_ERROR(ShadowRelu(ctx, &y_));
  return &y_;
}

Result<Tensor*> ReLU::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  XW_RETURN_IF_ERROR(ReluBackward(y_, dy, &dy));
  return &dy;
}

// ---- Pooling ----

MaxPool2d::MaxPool2d(int kernel, int stride) : spec_(Pool2dSpec::Square(kernel, stride)) {}

void MaxPool2d::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  name_ = prefix.empty() ? "maxpool" : prefix.substr(0, prefix.size() - 1);
}

Result<const Tensor*> MaxPool2d::Forward(const Tensor& x, const RunContext& ctx) {
  x_shape_ = x.shape();
  XW_RETURN_IF_ERROR(MaxPool2dForward(x, spec_, &y_, &argmax_));
  return &y_;
}

Result<Tensor*> MaxPool2d::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  PoolScatterOrder order;
  order.random = ctx.accel.scatter_random;
  order.seed = ctx.seed;
  order.step = static_cast<uint64_t>(ctx.step);
  order.tensor = StreamId("maxpool/" + name_);
  XW_RETURN_IF_ERROR(MaxPool2dBackward(dy, argmax_, x_shape_, spec_, order, &dx_));
  return &dx_;
}

AvgPool2d::AvgPool2d(int kernel, int stride) : spec_(Pool2dSpec::Square(kernel, stride)) {}

Result<const Tensor*> AvgPool2d::Forward(const Tensor& x, const RunContext& ctx) {
  x_shape_ = x.shape();
  XW_RETURN_IF_ERROR(AvgPool2dForward(x, spec_, ctx.kernels.reduce, &y_));
  RoundActivations(ctx, &y_);  // autocast: pooling runs in its input's 16-bit dtype
  return &y_;
}

Result<Tensor*> AvgPool2d::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  XW_RETURN_IF_ERROR(AvgPool2dBackward(dy, x_shape_, spec_, &dx_));
  RoundActivations(ctx, &dx_);
  return &dx_;
}

Result<const Tensor*> GlobalAvgPool::Forward(const Tensor& x, const RunContext& ctx) {
  x_shape_ = x.shape();
  XW_RETURN_IF_ERROR(GlobalAvgPoolForward(x, ctx.kernels.reduce, &y_));
  RoundActivations(ctx, &y_);  // fp32 accumulation, 16-bit output (acc_type)
  return &y_;
}

Result<Tensor*> GlobalAvgPool::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  XW_RETURN_IF_ERROR(GlobalAvgPoolBackward(dy, x_shape_, &dx_));
  RoundActivations(ctx, &dx_);
  return &dx_;
}

// ---- Dropout ----

Dropout::Dropout(double p) : p_(static_cast<float>(p)) {}

void Dropout::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  // The stream is named after the layer's path ("classifier.2").
  name_ = prefix.empty() ? "dropout" : prefix.substr(0, prefix.size() - 1);
}

Result<const Tensor*> Dropout::Forward(const Tensor& x, const RunContext& ctx) {
  const uint64_t stream =
      MixStream(StreamId(ctx.rng_stream + "/dropout/" + name_), static_cast<uint64_t>(ctx.step));
  XW_RETURN_IF_ERROR(DropoutForward(x, p_, Philox(ctx.seed, stream), 0, ctx.training, &y_,
                                    ctx.training ? &mask_ : nullptr));
  return &y_;
}

Result<Tensor*> Dropout::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  XW_RETURN_IF_ERROR(DropoutBackward(dy, mask_, &dy));
  return &dy;
}

// ---- Flatten ----

Result<const Tensor*> Flatten::Forward(const Tensor& x, const RunContext& ctx) {
  if (x.rank() < 1) return Status::InvalidArgument("flatten needs an input of rank >= 1");
  x_shape_ = x.shape();
  const int64_t n = x.dim(0);
  y_.Resize({n, n == 0 ? 0 : x.size() / n});
  std::copy(x.data(), x.data() + x.size(), y_.data());
  return &y_;
}

Result<Tensor*> Flatten::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  // A copy rather than reshaping dy in place: dy's owner keeps its shape, so
  // no buffer is reallocated on the next step.
  dx_.Resize(x_shape_);
  std::copy(dy.data(), dy.data() + dy.size(), dx_.data());
  return &dx_;
}

}  // namespace xw
