// Leaf modules (see module.h for the Forward/Backward contract): each wraps
// one core kernel and holds its parameters under PyTorch's names (weight,
// bias, running_mean, running_var, num_batches_tracked).
//
// Shapes: activations NCHW, conv weights OIHW, linear weights [out, in].
// Parameters are allocated (zero) at construction; Model::Initialize or
// Model::LoadState fills them.
#ifndef XWIRES_TRAINERS_LAYERS_H_
#define XWIRES_TRAINERS_LAYERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/batchnorm.h"
#include "xwires/core/conv.h"
#include "xwires/core/pooling.h"
#include "xwires/trainers/module.h"

namespace xw {

// 2-D convolution. A 'same' conv (pad < 0) pads as the profile's
// same_padding says: symmetric (k-1)/2 (PyTorch padding=(k-1)/2) or TF SAME
// (extra row/column at the bottom/right when the stride leaves one over).
// pad >= 0 is an explicit symmetric pad under every profile.
class Conv2d : public Module {
 public:
  static constexpr int kSame = -1;
  Conv2d(int64_t in_channels, int64_t out_channels, int kernel, int stride, int pad, bool bias);

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

  // The kernel spec this conv uses under `ctx` (exposed for tests).
  Conv2dSpec Spec(const RunContext& ctx) const;

 private:
  int kernel_, stride_, pad_;
  bool has_bias_;
  std::string name_ = "weight";  // state_dict name of the weight (set by Register)
  Tensor weight_, bias_, dweight_, dbias_;
  Tensor y_, dx_;
  const Tensor* x_ = nullptr;
  AccelOperandCache rounded_;  // rounded x and w from Forward to Backward
};

// y = x w^T + b; x [N, in] (or any [N, ...] flattening to in).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  int64_t in_, out_;
  bool has_bias_;
  Tensor weight_, bias_, dweight_, dbias_;
  Tensor y_, dx_;
  const Tensor* x_ = nullptr;
};

// Batch norm over NCHW channels (or [N, C]). Training: batch statistics,
// running statistics updated per the profile's BatchNormSpec and
// num_batches_tracked incremented (as torch does); eval: running statistics.
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t channels);

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  // The training forward with `epilogue` applied as the output is written,
  // into *out (not owned, kept by the caller until Backward) instead of the
  // module's own buffer: Sequential's fusion of BN -> [add] -> ReLU. The
  // same bits and state updates as Forward followed by the separate ops.
  // InvalidArgument outside training (ctx.training false).
  Result<const Tensor*> ForwardFused(const Tensor& x, const RunContext& ctx,
                                     const BatchNormEpilogue& epilogue,
                                     Tensor* out);
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  int64_t channels_;
  Tensor weight_, bias_, running_mean_, running_var_, num_batches_tracked_;
  Tensor dweight_, dbias_;
  BatchNormCache cache_;
  Tensor y_, dx_;
  const Tensor* x_ = nullptr;
};

// max(x, 0). Backward is in place on dy.
class ReLU : public Module {
 public:
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }
  // The buffer Forward writes and Backward masks with, for a producer that
  // applies this ReLU itself (Sequential's BatchNorm2d fusion).
  Tensor* output() { return &y_; }

 private:
  Tensor y_;
};

// Max pooling, kernel k, stride s, no padding (torch MaxPool2d(k, s)).
class MaxPool2d : public Module {
 public:
  MaxPool2d(int kernel, int stride);
  // Keeps the layer's path: the key of a random scatter order.
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  // Overlapping windows' gradients meet in ctx.accel's scatter order
  // (PoolScatterOrder, keyed by seed, step and this layer's path).
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }

 private:
  std::string name_ = "maxpool";
  Pool2dSpec spec_;
  std::vector<int32_t> argmax_;
  Shape x_shape_;
  Tensor y_, dx_;
};

// Average pooling, kernel k, stride s, no padding (torch AvgPool2d(k, s)).
class AvgPool2d : public Module {
 public:
  AvgPool2d(int kernel, int stride);
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }

 private:
  Pool2dSpec spec_;
  Shape x_shape_;
  Tensor y_, dx_;
};

// [N, C, H, W] -> [N, C] mean over the plane (AdaptiveAvgPool2d(1) + flatten).
class GlobalAvgPool : public Module {
 public:
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }

 private:
  Shape x_shape_;
  Tensor y_, dx_;
};

// Inverted dropout with probability p, active only in training. The mask of
// step t is drawn from the stream named after the layer's state_dict path
// (set by Register), so it is the same for any thread count. Backward is in
// place on dy.
class Dropout : public Module {
 public:
  explicit Dropout(double p);
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  float p_;
  std::string name_ = "dropout";
  Tensor y_, mask_;
};

// [N, ...] -> [N, rest] in NCHW (c, h, w) order, torch.flatten(x, 1).
class Flatten : public Module {
 public:
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  bool HasParameters() const override { return false; }

 private:
  Shape x_shape_;
  Tensor y_, dx_;
};

}  // namespace xw

#endif  // XWIRES_TRAINERS_LAYERS_H_
