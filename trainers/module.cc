#include "xwires/trainers/module.h"

#include <cmath>

namespace xw {

RunContext RunContext::ForProfile(const Profile& profile) {
  RunContext ctx;
  ctx.kernels = profile.kernels;
  ctx.bn = profile.bn;
  ctx.same_padding = profile.same_padding;
  ctx.rng_stream = profile.rng_stream;
  return ctx;
}

Module* Sequential::Add(std::string name, ModulePtr m) {
  children_.emplace_back(std::move(name), std::move(m));
  return children_.back().second.get();
}

Module* Sequential::Add(ModulePtr m) {
  return Add(std::to_string(children_.size()), std::move(m));
}

Result<const Tensor*> Sequential::Forward(const Tensor& x, const RunContext& ctx) {
  const Tensor* h = &x;
  for (auto& [name, child] : children_) {
    auto r = child->Forward(*h, ctx);
    if (!r.ok()) return name.empty() ? r.status() : r.status().WithContext(name);
    h = *r;
  }
  return h;
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
    if (!r.ok()) return name.empty() ? r.status() : r.status().WithContext(name);
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
