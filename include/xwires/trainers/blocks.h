// Composite modules of the residual and dense architectures, with
// torchvision's child names (torchvision/models/{resnet,densenet}.py), so
// their state_dict paths match: "layer1.0.conv1.weight",
// "layer2.0.downsample.0.weight", "features.denseblock1.denselayer1.norm1.bias".
// Module contract: module.h. Not thread-safe.
#ifndef XWIRES_TRAINERS_BLOCKS_H_
#define XWIRES_TRAINERS_BLOCKS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xwires/trainers/layers.h"
#include "xwires/trainers/module.h"

namespace xw {

// torchvision BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// conv1 3x3 with the block's stride, conv2 3x3; shortcut = downsample
// (conv1x1 with stride + BN, children "downsample.0/1") when the stride or
// the channel count changes, else identity. Output channels: planes.
class BasicBlock : public Module {
 public:
  static constexpr int kExpansion = 1;
  BasicBlock(int64_t inplanes, int64_t planes, int stride);

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  Sequential main_;                         // conv1 bn1 relu conv2 bn2
  std::unique_ptr<Sequential> downsample_;  // null: identity shortcut
  Tensor sum_;                              // main + shortcut, then relu'd
};

// torchvision Bottleneck (ResNet v1.5: the stride sits on the 3x3 conv):
// conv1 1x1 -> bn1 -> relu -> conv2 3x3/stride -> bn2 -> relu -> conv3 1x1
// (planes*4) -> bn3, plus shortcut, then relu. Output channels: planes * 4.
class Bottleneck : public Module {
 public:
  static constexpr int kExpansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int stride);

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  Sequential main_;
  std::unique_ptr<Sequential> downsample_;
  Tensor sum_;
};

// torchvision _DenseBlock: layer i (children "denselayer1".."denselayerL")
// sees the channel concatenation of the block input and every earlier
// layer's output; each _DenseLayer is norm1 relu1 conv1 (1x1, bn_size *
// growth) norm2 relu2 conv2 (3x3, growth). The block output concatenates the
// input and all L new feature maps: in_channels + L * growth channels.
class DenseBlock : public Module {
 public:
  DenseBlock(int num_layers, int64_t in_channels, int64_t growth, int64_t bn_size);
  int64_t out_channels() const { return in_channels_ + num_layers_ * growth_; }

  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx) override;
  Result<Tensor*> Backward(Tensor& dy, const RunContext& ctx, bool need_dx) override;
  void Register(const std::string& prefix, std::vector<StateEntry>* out) override;

 private:
  int num_layers_;
  int64_t in_channels_, growth_;
  std::vector<std::unique_ptr<Sequential>> layers_;
  // concat_[i]: input of layer i (i >= 1; layer 0 reads x), concat_[L]: output.
  std::vector<Tensor> concat_;
  const Tensor* x_ = nullptr;
  Tensor grad_;     // gradient w.r.t. the full concatenation, accumulated
  Tensor slice_;    // one layer's output gradient
  Tensor dx_;
};

// torchvision _Transition: norm relu conv (1x1, no bias) pool (AvgPool 2x2).
std::unique_ptr<Sequential> MakeDenseTransition(int64_t in_channels, int64_t out_channels);

}  // namespace xw

#endif  // XWIRES_TRAINERS_BLOCKS_H_
