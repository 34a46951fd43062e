// Adam in PyTorch 1.13 and Keras/TF arithmetic. See optimizer.h for the exact
// operation order; the comments below name the framework op each line mirrors.
#include "xwires/trainers/optimizer.h"

#include <cmath>
#include <limits>
#include <string>

#include "src/fma_clones.h"
#include "src/fma_scalar.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

// torch.maximum / tf.maximum: NaN if either side is NaN.
inline float NanMax(float a, float b) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return (std::isnan(a) || std::isnan(b)) ? nan : (a > b ? a : b);
}

// How "a + b*c" is computed: two roundings, or fused (ATen's vec::fmadd)
// by the FMA instruction or FmaF's exact emulation (src/fma_scalar.h), one
// rounding either way. The path is chosen once per update (PickRange), not
// per element, so the loops stay vectorized in the FMA clones.
enum class Fused { kNo, kInstruction, kEmulated };

template <Fused kFma>
inline float MulAdd(float b, float c, float a) {
  if constexpr (kFma == Fused::kNo) {
    return a + b * c;
  } else if constexpr (kFma == Fused::kInstruction) {
    return FmaOn<FmaPath::kInstruction>(b, c, a);
  } else {
    return FmaOn<FmaPath::kEmulated>(b, c, a);
  }
}

// The elementwise loops are templates on the profile's switches so that each
// instantiation is branch-free and the compiler can vectorise it; the
// arithmetic per element is the same either way.
using RangeFn = void (*)(const AdamScalars&, float*, const float*, float*, float*, float*, int64_t,
                         int64_t);


// Elements [begin, end) of one parameter, torch.optim.Adam(W) 1.13
// _single_tensor_adam.
template <Fused kFma, bool kL2, bool kAms>
XW_FMA_CLONES void TorchRange(const AdamScalars& s, float* __restrict p, const float* __restrict grad,
                float* __restrict m, float* __restrict v, float* __restrict vmax, int64_t begin,
                int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    float g = grad[i];
    if constexpr (kL2) {
      g = MulAdd<kFma>(p[i], s.wd, g);  // grad.add(param, alpha=wd)
    } else {
      p[i] = p[i] * s.decay_factor;  // AdamW: param.mul_(1 - lr*wd)
    }
    m[i] = MulAdd<kFma>(g, s.one_minus_beta1, m[i] * s.beta1);      // mul_(b1).add_(g, alpha=1-b1)
    v[i] = MulAdd<kFma>(s.one_minus_beta2 * g, g, v[i] * s.beta2);  // mul_(b2).addcmul_(g, g, 1-b2)
    float vv = v[i];
    if constexpr (kAms) vv = vmax[i] = NanMax(vmax[i], v[i]);
    const float denom = std::sqrt(vv) / s.bc2_sqrt + s.eps;  // (sqrt / bc2_sqrt).add_(eps)
    p[i] = p[i] + (s.neg_step_size * m[i]) / denom;          // addcdiv_(m, denom, -step_size)
  }
}

// Keras 3 / tf-keras Adam.update_step with _apply_weight_decay before it.
template <Fused kFma, bool kL2, bool kAms>
XW_FMA_CLONES void KerasRange(const AdamScalars& s, float* __restrict p, const float* __restrict grad,
                float* __restrict m, float* __restrict v, float* __restrict vmax, int64_t begin,
                int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    float g = grad[i];
    if constexpr (kL2) {
      g = MulAdd<kFma>(p[i], s.wd, g);
    } else {
      p[i] = MulAdd<kFma>(-(p[i] * s.wd), s.lr, p[i]);  // var.assign_sub(var * wd * lr)
    }
    m[i] = MulAdd<kFma>(g - m[i], s.one_minus_beta1, m[i]);      // m += (g - m) * (1 - b1)
    v[i] = MulAdd<kFma>(g * g - v[i], s.one_minus_beta2, v[i]);  // v += (g^2 - v) * (1 - b2)
    float vv = v[i];
    if constexpr (kAms) vv = vmax[i] = NanMax(vmax[i], v[i]);  // v_hat = max(v_hat, v)
    p[i] = p[i] - (m[i] * s.alpha) / (std::sqrt(vv) + s.eps);
  }
}

template <Fused kFma, bool kL2, bool kAms>
RangeFn PickVariant(AdamVariant variant) {
  return variant == AdamVariant::kTorch ? TorchRange<kFma, kL2, kAms> : KerasRange<kFma, kL2, kAms>;
}

template <Fused kFma>
RangeFn PickSwitches(const Profile::AdamNumerics& n) {
  const bool l2 = n.weight_decay == WeightDecayMode::kL2InGradient;
  if (l2) {
    return n.amsgrad ? PickVariant<kFma, true, true>(n.variant)
                     : PickVariant<kFma, true, false>(n.variant);
  }
  return n.amsgrad ? PickVariant<kFma, false, true>(n.variant)
                   : PickVariant<kFma, false, false>(n.variant);
}

RangeFn PickRange(const Profile::AdamNumerics& n) {
  if (!n.fma) return PickSwitches<Fused::kNo>(n);
  return FmaPathNow() == FmaPath::kInstruction ? PickSwitches<Fused::kInstruction>(n)
                                                 : PickSwitches<Fused::kEmulated>(n);
}

std::string Field(const char* name, double value) {
  return std::string("Adam ") + name + " = " + std::to_string(value);
}

}  // namespace

Status ValidateAdamOptions(const AdamOptions& o) {
  if (!std::isfinite(o.lr) || o.lr < 0) {
    return Status::InvalidArgument(Field("lr", o.lr) + " (must be finite and >= 0)");
  }
  if (!(o.beta1 >= 0 && o.beta1 < 1)) {
    return Status::InvalidArgument(Field("beta1", o.beta1) + " (must be in [0, 1))");
  }
  if (!(o.beta2 >= 0 && o.beta2 < 1)) {
    return Status::InvalidArgument(Field("beta2", o.beta2) + " (must be in [0, 1))");
  }
  if (!std::isfinite(o.eps) || o.eps < 0) {
    return Status::InvalidArgument(Field("eps", o.eps) + " (must be finite and >= 0)");
  }
  if (!std::isfinite(o.weight_decay) || o.weight_decay < 0) {
    return Status::InvalidArgument(Field("weight_decay", o.weight_decay) +
                                   " (must be finite and >= 0)");
  }
  return Status::OK();
}

AdamScalars ComputeAdamScalars(const AdamOptions& o, const Profile::AdamNumerics& n, int64_t t) {
  AdamScalars s{};
  // Python floats handed to float32 kernels: formed in double, rounded once.
  s.beta1 = static_cast<float>(o.beta1);
  s.beta2 = static_cast<float>(o.beta2);
  s.one_minus_beta1 = static_cast<float>(1.0 - o.beta1);
  s.one_minus_beta2 = static_cast<float>(1.0 - o.beta2);
  s.eps = static_cast<float>(o.eps);
  s.wd = static_cast<float>(o.weight_decay);
  s.lr = static_cast<float>(o.lr);
  const double td = static_cast<double>(t);
  if (n.bias_correction_double) {
    const double bc1 = 1.0 - std::pow(o.beta1, td);  // Python beta1 ** step
    const double bc2 = 1.0 - std::pow(o.beta2, td);
    s.neg_step_size = static_cast<float>(-(o.lr / bc1));
    s.bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    s.alpha = static_cast<float>(o.lr * std::sqrt(bc2) / bc1);
    s.decay_factor = static_cast<float>(1.0 - o.lr * o.weight_decay);
  } else {
    // TF: pow(cast(beta, float32), cast(step, float32)) and float32 ops after.
    const float tf = static_cast<float>(t);
    const float b1p = std::pow(s.beta1, tf);
    const float b2p = std::pow(s.beta2, tf);
    const float bc1 = 1.0f - b1p;
    const float bc2 = 1.0f - b2p;
    s.neg_step_size = -(s.lr / bc1);
    s.bc2_sqrt = std::sqrt(bc2);
    s.alpha = (s.lr * std::sqrt(bc2)) / bc1;  // lr * sqrt(1 - b2p) / (1 - b1p)
    s.decay_factor = 1.0f - s.lr * s.wd;
  }
  if (n.variant == AdamVariant::kKeras) s.bc2_sqrt = 0.0f;
  return s;
}

Adam::Adam(const AdamOptions& options, const Profile& profile)
    : options_(options), numerics_(profile.adam) {}

Status Adam::Step(const std::vector<Tensor*>& params, const std::vector<const Tensor*>& grads) {
  if (params.size() != grads.size()) {
    return Status::InvalidArgument("Adam::Step: " + std::to_string(params.size()) +
                                   " parameters but " + std::to_string(grads.size()) +
                                   " gradients");
  }
  if (!slots_.empty() && slots_.size() != params.size()) {
    return Status::InvalidArgument("Adam::Step: optimizer state has " +
                                   std::to_string(slots_.size()) + " parameters, got " +
                                   std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr || grads[i] == nullptr) {
      return Status::InvalidArgument("Adam::Step: null tensor at index " + std::to_string(i));
    }
    const Shape& ps = params[i]->shape();
    if (grads[i]->shape() != ps || (!slots_.empty() && slots_[i].m.shape() != ps)) {
      return Status::InvalidArgument(
          "Adam::Step: parameter " + std::to_string(i) + " has shape " + ShapeToString(ps) +
          ", gradient " + ShapeToString(grads[i]->shape()) +
          (slots_.empty() ? "" : ", state " + ShapeToString(slots_[i].m.shape())));
    }
  }
  if (slots_.empty()) {
    slots_.resize(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      slots_[i].m = Tensor(params[i]->shape());
      slots_[i].v = Tensor(params[i]->shape());
      if (numerics_.amsgrad) slots_[i].vmax = Tensor(params[i]->shape());
    }
  }
  ++step_;
  const AdamScalars s = ComputeAdamScalars(options_, numerics_, step_);
  const RangeFn range = PickRange(numerics_);
  for (size_t i = 0; i < params.size(); ++i) {
    float* p = params[i]->data();
    const float* g = grads[i]->data();
    float* m = slots_[i].m.data();
    float* v = slots_[i].v.data();
    float* vmax = numerics_.amsgrad ? slots_[i].vmax.data() : nullptr;
    const int64_t n = params[i]->size();
    ParallelFor(n, GrainFor(n, 4096),
                [&](int64_t b, int64_t e) { range(s, p, g, m, v, vmax, b, e); });
  }
  return Status::OK();
}

Status Adam::Restore(int64_t step, std::vector<AdamSlot> slots) {
  if (step < 0)
    return Status::InvalidArgument("Adam::Restore: negative step " + std::to_string(step));
  for (size_t i = 0; i < slots.size(); ++i) {
    const AdamSlot& s = slots[i];
    const bool vmax_ok = numerics_.amsgrad ? s.vmax.shape() == s.m.shape() : s.vmax.empty();
    if (s.v.shape() != s.m.shape() || !vmax_ok) {
      return Status::InvalidArgument(
          "Adam::Restore: slot " + std::to_string(i) + " has m " + ShapeToString(s.m.shape()) +
          ", v " + ShapeToString(s.v.shape()) + ", vmax " + ShapeToString(s.vmax.shape()) +
          (numerics_.amsgrad ? " (AMSGrad needs vmax shaped like m)"
                             : " (vmax must be empty without AMSGrad)"));
    }
  }
  step_ = step;
  slots_ = std::move(slots);
  return Status::OK();
}

}  // namespace xw
