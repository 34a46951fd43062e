// ReLU shadowing: the framework's ReLU decisions at inputs within rounding
// of zero, imposed on xwires' training forward passes.
#include "conformance_shadow.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "conformance_exchange.h"
#include "xwires/api/conformance.h"

namespace xw::conformance {

namespace {

std::string ShapeText(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// "<step>/<call>" -> step, call; false when the name is not that.
bool ParseCallName(const std::string& name, int64_t* step, int64_t* call) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size()) return false;
  char* end = nullptr;
  *step = std::strtoll(name.c_str(), &end, 10);
  if (end != name.c_str() + slash) return false;
  *call = std::strtoll(name.c_str() + slash + 1, &end, 10);
  return *end == '\0' && *step >= 1 && *call >= 0;
}

}  // namespace

void ShadowCount::Add(const ShadowCount& o) {
  shadowed += o.shadowed;
  unaligned += o.unaligned;
  max_rel = std::max(max_rel, o.max_rel);
}

Result<ReluCalls> ReadReluCalls(const std::string& path, int64_t steps) {
  XW_ASSIGN_OR_RETURN(NamedTensors all, ReadExchange(path));
  std::map<int64_t, std::map<int64_t, Tensor>> by_step;
  for (NamedTensor& t : all) {
    int64_t step = 0, call = 0;
    if (t.is_int64 || !ParseCallName(t.name, &step, &call)) {
      return Status::Corruption(path + ": tensor '" + t.name +
                                "' is not a float32 ReLU input named <step>/<call>");
    }
    by_step[step][call] = std::move(t.value);
  }
  ReluCalls out;
  for (int64_t step = 1; step <= steps; ++step) {
    auto it = by_step.find(step);
    if (it == by_step.end()) {
      return Status::Corruption(path + ": no ReLU inputs for step " + std::to_string(step));
    }
    int64_t expect = 0;
    for (auto& [call, z] : it->second) {
      if (call != expect++) {
        return Status::Corruption(path + ": step " + std::to_string(step) + " has no call " +
                                  std::to_string(expect - 1));
      }
      out[step].push_back(std::move(z));
    }
  }
  return out;
}

ShadowCount ShadowReluOutput(const Tensor& z, Tensor* y) {
  ShadowCount count;
  const int64_t n = std::min(z.size(), y->size());
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isnan(z[i])) max_abs = std::max(max_abs, std::fabs(static_cast<double>(z[i])));
  }
  // Within rounding of zero: two float32 implementations that sum the same
  // terms in other orders differ by some ulps of the terms' magnitudes,
  // which before a ReLU (a batch-normalised channel, a residual sum, a
  // layer's output) are of the order of the call's largest input; 2^-16 of
  // that (2^7 of its ulps) leaves room for long sums and for batch norm's
  // 1/std on near-constant channels (the flips met on the digits lie at
  // 1.4e-8 .. 1.9e-7 of it: docs/profiles.md, "ReLU shadowing"). An input
  // further from zero is on its side for a reason: a differing decision
  // there is a difference of meaning, left to show in the error.
  const double tolerance = kConformanceShadowTolerance * max_abs;
  for (int64_t i = 0; i < n; ++i) {
    const float zi = z[i], yi = (*y)[i];
    if (std::isnan(zi) || std::isnan(yi)) continue;
    const bool theirs = zi > 0.0f, ours = yi > 0.0f;
    if (theirs == ours) continue;
    const double a = std::fabs(static_cast<double>(zi));
    if (a > tolerance) {
      ++count.unaligned;
      continue;
    }
    (*y)[i] = theirs ? zi : 0.0f;
    ++count.shadowed;
    count.max_rel = std::max(count.max_rel, max_abs > 0 ? a / max_abs : 0.0);
  }
  return count;
}

ReluShadowHook ReluShadow::Hook() {
  return [this](const RunContext& ctx, Tensor* y) { return Apply(ctx.step, y); };
}

Status ReluShadow::Apply(int64_t step, Tensor* y) {
  auto it = calls_->find(step);
  if (it == calls_->end()) {
    return Status::Internal("ReLU shadowing: the framework recorded no ReLU inputs for step " +
                            std::to_string(step));
  }
  const size_t call = next_call_[step]++;
  const std::string where = "step " + std::to_string(step) + ", ReLU call " +
                            std::to_string(call);
  if (call >= it->second.size()) {
    return Status::Internal("ReLU shadowing: " + where + ": the framework made only " +
                            std::to_string(it->second.size()) + " ReLU calls in that step");
  }
  const Tensor& z = it->second[call];
  if (z.shape() != y->shape()) {
    return Status::Internal("ReLU shadowing: " + where + ": xwires' output is " +
                            ShapeText(y->shape()) + ", the framework's input " +
                            ShapeText(z.shape()));
  }
  counts_[step].Add(ShadowReluOutput(z, y));
  return Status::OK();
}

Status ReluShadow::EndStep(int64_t step) const {
  auto it = calls_->find(step);
  const size_t theirs = it == calls_->end() ? 0 : it->second.size();
  auto mine = next_call_.find(step);
  const size_t ours = mine == next_call_.end() ? 0 : mine->second;
  if (ours != theirs) {
    return Status::Internal("ReLU shadowing: step " + std::to_string(step) + ": xwires made " +
                            std::to_string(ours) + " ReLU calls, the framework " +
                            std::to_string(theirs));
  }
  return Status::OK();
}

ShadowCount ReluShadow::count(int64_t step) const {
  auto it = counts_.find(step);
  return it == counts_.end() ? ShadowCount{} : it->second;
}

}  // namespace xw::conformance
