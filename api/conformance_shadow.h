// ReLU shadowing (api/conformance.h, "Why the ReLUs are shadowed"): xwires'
// training forward passes take the framework's decision at every ReLU whose
// input lies within rounding of zero, so that the checks measure the
// arithmetic and not which side of zero a reordered sum happened to land.
#ifndef XWIRES_API_CONFORMANCE_SHADOW_H_
#define XWIRES_API_CONFORMANCE_SHADOW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/trainers/module.h"

namespace xw::conformance {

// The framework's ReLU inputs z of each training step's forward pass, in
// call order (a runner's OUT_DIR/relu.xwt, tensors "<step>/<call>"), laid
// out as xwires lays out that ReLU's output (NCHW, or [N, features]).
using ReluCalls = std::map<int64_t, std::vector<Tensor>>;

// Reads relu.xwt. Corruption (naming the file) when a name is not
// "<step>/<call>", a step in 1..steps has no calls, or its calls are not
// numbered 0, 1, ... without gaps.
Result<ReluCalls> ReadReluCalls(const std::string& path, int64_t steps);

// What shadowing did to one ReLU call or one step's calls.
struct ShadowCount {
  int64_t shadowed = 0;   // decisions aligned with the framework's
  int64_t unaligned = 0;  // differing decisions beyond the tolerance, kept
  double max_rel = 0;     // largest shadowed |z| / max |z| of its call
  void Add(const ShadowCount& o);
};

// Aligns one ReLU output y (xwires' decision: y > 0) with the framework's
// input z of the same call (its decision: z > 0). Where they differ and
// |z| <= kConformanceShadowTolerance * max|z|, y becomes z (the framework
// passes the element) or 0 (it drops it); a difference beyond that is
// counted and left alone; NaN on either side is left alone. y and z must
// have the same number of elements (the caller checks shapes).
ShadowCount ShadowReluOutput(const Tensor& z, Tensor* y);

// The ReluShadowHook of one training run against `calls` (borrowed; it and
// this object must outlive the run). Not thread-safe: one run at a time.
class ReluShadow {
 public:
  explicit ReluShadow(const ReluCalls* calls) : calls_(calls) {}
  // Calls ShadowReluOutput on the next call of the step ctx.step. Errors:
  // a step the framework did not run, more calls than the framework made,
  // a call whose shape differs (naming the step, the call, both shapes).
  ReluShadowHook Hook();
  // After the step's forward pass: an error unless xwires made exactly as
  // many ReLU calls as the framework.
  Status EndStep(int64_t step) const;
  // The step's total (zero when it has not run).
  ShadowCount count(int64_t step) const;

 private:
  Status Apply(int64_t step, Tensor* y);

  const ReluCalls* calls_;
  std::map<int64_t, size_t> next_call_;
  std::map<int64_t, ShadowCount> counts_;
};

}  // namespace xw::conformance

#endif  // XWIRES_API_CONFORMANCE_SHADOW_H_
