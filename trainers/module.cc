#include "xwires/trainers/module.h"

#include <cmath>

#include "xwires/core/tensor_ops.h"
#include "xwires/trainers/layers.h"

namespace xw {

RunContext RunContext::ForProfile(const Profile& profile) {
  RunContext ctx;
  ctx.kernels = profile.kernels;
  ctx.bn = profile.bn;
  ctx.same_padding = profile.same_padding;
  ctx.rng_stream = profile.rng_stream;
  ctx.accel = profile.accel;
  ctx.mixed = MixedPrecisionFormat(profile.mixed_precision);
  return ctx;
}

void RoundActivations(const RunContext& ctx, Tensor* t) {
  if (ctx.mixed == StorageFormat::kFp32) return;
  RoundToFormatInPlace(t->data(), t->size(), ctx.mixed, ctx.accel.flush_bf16_subnormals);
}

Module* Sequential::Add(std::string name, ModulePtr m) {
  children_.emplace_back(std::move(name), std::move(m));
  return children_.back().second.get();
}

Module* Sequential::Add(ModulePtr m) {
  return Add(std::to_string(children_.size()), std::move(m));
}

Result<const Tensor*> Sequential::Forward(const Tensor& x, const RunContext& ctx) {
  return ForwardRange(x, ctx, children_.size());
}

Result<const Tensor*> Sequential::ForwardRange(const Tensor& x,
                                               const RunContext& ctx,
                                               size_t end) {
  const Tensor* h = &x;
  for (size_t i = 0; i < end; ++i) {
    auto& [name, child] = children_[i];
    // BN -> ReLU: the ReLU's output written by the BN's last pass; the ReLU's
    // Backward masks with it as if it had run.
    auto* bn = ctx.training && ctx.mixed == StorageFormat::kFp32 && i + 1 < end
                   ? dynamic_cast<BatchNorm2d*>(child.get())
                   : nullptr;
    auto* relu =
        bn ? dynamic_cast<ReLU*>(children_[i + 1].second.get()) : nullptr;
    auto r = relu ? bn->ForwardFused(*h, ctx, BatchNormEpilogue{nullptr, true},
                                     relu->output())
                  : child->Forward(*h, ctx);
    if (!r.ok()) return r.status().WithContext(name);
    h = *r;
    if (relu) {
      XW_RETURN_IF_ERROR(ShadowRelu(ctx, relu->output()));
      ++i;
    }
  }
  return h;
}

Result<const Tensor*> Sequential::ForwardAddRelu(const Tensor& x,
                                                 const RunContext& ctx,
                                                 const Tensor& residual,
                                                 Tensor* out) {
  // Under mixed precision the BN output and the sum are each rounded to 16
  // bits (relu of a rounded sum is the rounded relu), so no fusion there.
  auto* bn = ctx.training && ctx.mixed == StorageFormat::kFp32 && !children_.empty()
                 ? dynamic_cast<BatchNorm2d*>(children_.back().second.get())
                 : nullptr;
  if (bn == nullptr) {
    XW_ASSIGN_OR_RETURN(const Tensor* m, Forward(x, ctx));
    XW_RETURN_IF_ERROR(AddReluForward(*m, residual, out));
    RoundActivations(ctx, out);
    XW_RETURN_IF_ERROR(ShadowRelu(ctx, out));
    return static_cast<const Tensor*>(out);
  }
  XW_ASSIGN_OR_RETURN(const Tensor* h,
                      ForwardRange(x, ctx, children_.size() - 1));
  auto r = bn->ForwardFused(*h, ctx, BatchNormEpilogue{&residual, true}, out);
  const std::string& name = children_.back().first;
  if (!r.ok()) return r.status().WithContext(name);
  XW_RETURN_IF_ERROR(ShadowRelu(ctx, out));
  return r;
}

Result<Tensor*> Sequential::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  // Child i needs its input gradient only if a child before it has
  // parameters: an MLP's leading Flatten has none, so its first Linear skips
  // the largest product of the backward pass.
  size_t first = 0;
  while (first < children_.size() && !children_[first].second->HasParameters()) ++first;
  Tensor* g = &dy;
  for (size_t i = children_.size(); i-- > 0;) {
    auto& [name, child] = children_[i];
    const bool need = need_dx || i > first;
    auto r = child->Backward(*g, ctx, need);
    if (!r.ok()) return r.status().WithContext(name);
    g = *r;
    if (!need) return static_cast<Tensor*>(nullptr);
  }
  return g;
}

bool Sequential::HasParameters() const {
  for (const auto& [name, child] : children_) {
    if (child->HasParameters()) return true;
  }
  return false;
}

void Sequential::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  for (auto& [name, child] : children_) {
    child->Register(name.empty() ? prefix : prefix + name + ".", out);
  }
}

int64_t ScaledChannels(int64_t channels, double width) {
  // nearbyint rounds half to even in the default rounding mode, like Python.
  const double v = std::nearbyint(static_cast<double>(channels) * width);
  return v < 1.0 ? 1 : static_cast<int64_t>(v);
}

}  // namespace xw
