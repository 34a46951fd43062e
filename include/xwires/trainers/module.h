// The module system: a network is a tree of modules, each with its forward
// and backward pass side by side, holding its parameters and buffers under
// their PyTorch state_dict names.
//
// Contract of every module:
//  - Forward(x, ctx) reads x, which the caller keeps alive and unchanged until
//    the matching Backward, and returns a pointer to the output, owned by the
//    module and valid until its next Forward. Buffers are reused across calls
//    (Tensor::Resize keeps them when the shape repeats), so a training step
//    allocates nothing once shapes have settled.
//  - Backward(dy, ctx, need_dx) takes the gradient of the loss with respect
//    to the last output (same shape) and writes, overwriting, the gradients
//    of the module's parameters. It returns the gradient with respect to the
//    input x, owned by the module or equal to &dy (modules documented as "in
//    place" may overwrite *dy and return it), or nullptr when !need_dx (the
//    network input needs no gradient). After Backward the caller may
//    overwrite *dy.
//  - Register(prefix, out) appends the module's state_dict entries in
//    PyTorch's order: own parameters, own buffers, then children in
//    registration order, each child under prefix + child name + ".".
// Modules are not thread-safe; the kernels they call parallelise internally
// through xw::ParallelFor and are bitwise reproducible for any thread count.
#ifndef XWIRES_TRAINERS_MODULE_H_
#define XWIRES_TRAINERS_MODULE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/batchnorm.h"
#include "xwires/core/numerics.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/trainers/init.h"
#include "xwires/trainers/profile.h"

namespace xw {

struct RunContext;

// A test seam of the training forward pass (TrainOptions::relu_shadow):
// called with every ReLU's output y right after it is written and before
// anything reads it, in graph order; it may change y in place (every ReLU's
// backward masks with y > 0, so y alone carries the ReLU's decision). An
// error stops the pass with it.
using ReluShadowHook = std::function<Status(const RunContext& ctx, Tensor* y)>;

// Everything a forward/backward pass needs besides the data. The numerics
// come from the profile; the graph never depends on them.
struct RunContext {
  KernelNumerics kernels;
  BatchNormSpec bn;
  SamePadding same_padding = SamePadding::kSymmetric;
  bool training = false;
  // Dropout draws from Philox(seed, MixStream(StreamId(rng_stream +
  // "/dropout/" + layer name), step)).
  uint64_t seed = 0;
  std::string rng_stream;
  int64_t step = 0;
  // Accelerator emulation of the convolutions' and dense layers' products
  // (profile.accel, accel_ops.h) and the 16-bit format of activations and
  // gradients under mixed precision (kFp32: none). See RoundActivations.
  AccelSpec accel;
  StorageFormat mixed = StorageFormat::kFp32;
  // Conformance only (api/conformance.h): the hook ShadowRelu calls in
  // training passes. Borrowed (TrainProfile points it at its options');
  // null, the default: no call.
  const ReluShadowHook* relu_shadow = nullptr;

  // Numerics of `profile`, in eval mode.
  static RunContext ForProfile(const Profile& profile);
};

// Under mixed precision (ctx.mixed bf16 or fp16) rounds t to that format in
// place, as an autocast op writes its 16-bit output: convolution and linear
// outputs and their input and weight gradients, batch-norm outputs and
// input gradients, residual sums and their gradients. No-op for fp32.
void RoundActivations(const RunContext& ctx, Tensor* t);

// Every site that writes a ReLU's output in a training pass calls this on
// it (ReLU::Forward, Sequential's fused BatchNorm -> [add] -> ReLU, the
// residual blocks' add + ReLU). Runs ctx.relu_shadow when set and
// ctx.training; otherwise OK at the cost of one test.
inline Status ShadowRelu(const RunContext& ctx, Tensor* y) {
  if (ctx.relu_shadow == nullptr || !ctx.training) return Status::OK();
  return (*ctx.relu_shadow)(ctx, y);
}

// One state_dict entry: a parameter (grad != nullptr) or a buffer.
struct StateEntry {
  ParamInfo info;         // name, kind, fans (family set by the Model)
  Tensor* value = nullptr;
  Tensor* grad = nullptr;  // same shape as value; nullptr for buffers
  bool is_int64 = false;   // num_batches_tracked
};

class Module {
 public:
  virtual ~Module() = default;
  virtual Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) = 0;
  virtual Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) = 0;
  virtual void Register(const std::string& prefix, std::vector<StateEntry>* out) {}
  // False only if neither this module nor anything inside it has trainable
  // parameters, so that a Sequential can skip the input gradient of the
  // modules after such a prefix. The default (true) is always safe.
  virtual bool HasParameters() const { return true; }
};

using ModulePtr = std::unique_ptr<Module>;

// Children run in order; names are the state_dict path components ("0",
// "1", ... for torch's nn.Sequential, or "conv1", "layer1", ...). A child
// named "" has no state and no path component (a functional op such as
// torchvision's F.relu inside forward()).
class Sequential : public Module {
 public:
  Sequential() = default;
  // Appends a child; returns it for convenience.
  Module* Add(std::string name, ModulePtr m);
  // Appends with the next numeric name ("0", "1", ...), counting every child.
  Module* Add(ModulePtr m);
  size_t size() const { return children_.size(); }
  // Child i and its name, for per-module inspection (trainers/capture.h).
  const std::pair<std::string, ModulePtr>& child(size_t i) const { return children_[i]; }

  // In training, a BatchNorm2d followed by a ReLU is one pass that writes
  // the ReLU's output (BatchNorm2d::ForwardFused): the same bits as the two
  // modules one after the other, one pass over memory fewer.
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  // *out = max(Forward(x) + residual, 0) with AddReluForward's bits, the
  // residual block's tail; returns out. In training a last child BatchNorm2d
  // adds and clamps as it writes, where AddReluForward would read its output
  // back. residual must stay alive and unchanged during the call.
  Result<const Tensor*> ForwardAddRelu(const Tensor& x, const RunContext& ctx,
                                       const Tensor& residual, Tensor* out);
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;
  bool HasParameters() const override;

 private:
  // Children [0, end) of Forward.
  Result<const Tensor*> ForwardRange(const Tensor& x, const RunContext& ctx,
                                     size_t end);

  std::vector<std::pair<std::string, ModulePtr>> children_;
};

// Channel count under a width multiplier: c * width rounded half to even
// (Python's round, as tests/fixtures/torch_models/xw_models.py), at least 1.
int64_t ScaledChannels(int64_t channels, double width);

}  // namespace xw

#endif  // XWIRES_TRAINERS_MODULE_H_
