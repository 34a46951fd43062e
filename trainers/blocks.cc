// Residual blocks and dense blocks: forward and backward side by side.
#include "xwires/trainers/blocks.h"

#include <algorithm>
#include <cstring>

#include "xwires/core/activation.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor_ops.h"

namespace xw {

namespace {

std::unique_ptr<Sequential> MakeDownsample(int64_t in, int64_t out, int stride) {
  auto ds = std::make_unique<Sequential>();
  ds->Add(std::make_unique<Conv2d>(in, out, 1, stride, Conv2d::kSame, false));
  ds->Add(std::make_unique<BatchNorm2d>(out));
  return ds;
}

// Shared by both residual blocks: y = relu(main(x) + shortcut(x)). The
// shortcut first, so that main's last batch norm can add it and clamp as it
// writes (Sequential::ForwardAddRelu); the branches share no state.
Result<const Tensor*> ResidualForward(Sequential& main, Sequential* downsample,
                                      const Tensor& x, const RunContext& ctx,
                                      Tensor* sum) {
  const Tensor* shortcut = &x;
  if (downsample != nullptr) {
    XW_ASSIGN_OR_RETURN(shortcut, downsample->Forward(x, ctx));
  }
  return main.ForwardAddRelu(x, ctx, *shortcut, sum);
}

// dsum = relu'(y) * dy (in place on dy); dx = main'(dsum) + shortcut'(dsum).
Result<Tensor*> ResidualBackward(Sequential& main, Sequential* downsample, const Tensor& y,
                                 Tensor& dy, const RunContext& ctx, bool need_dx) {
  XW_RETURN_IF_ERROR(ReluBackward(y, dy, &dy));
  // The shortcut first: main's first op (a BatchNorm) leaves dy intact, but
  // its later ops (ReLU) work in place on their own buffers only.
  Tensor* dshort = &dy;
  if (downsample != nullptr) {
    XW_ASSIGN_OR_RETURN(dshort, downsample->Backward(dy, ctx, need_dx));
  }
  XW_ASSIGN_OR_RETURN(Tensor * dmain, main.Backward(dy, ctx, need_dx));
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  XW_RETURN_IF_ERROR(AddForward(*dmain, *dshort, dmain));
  RoundActivations(ctx, dmain);  // the two branches' gradients meet in 16 bits
  return dmain;
}

}  // namespace

// ---- BasicBlock ----

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int stride) {
  main_.Add("conv1", std::make_unique<Conv2d>(inplanes, planes, 3, stride, Conv2d::kSame, false));
  main_.Add("bn1", std::make_unique<BatchNorm2d>(planes));
  main_.Add("", std::make_unique<ReLU>());
  main_.Add("conv2", std::make_unique<Conv2d>(planes, planes, 3, 1, Conv2d::kSame, false));
  main_.Add("bn2", std::make_unique<BatchNorm2d>(planes));
  if (stride != 1 || inplanes != planes * kExpansion) {
    downsample_ = MakeDownsample(inplanes, planes * kExpansion, stride);
  }
}

Result<const Tensor*> BasicBlock::Forward(const Tensor& x, const RunContext& ctx) {
  return ResidualForward(main_, downsample_.get(), x, ctx, &sum_);
}

Result<Tensor*> BasicBlock::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  return ResidualBackward(main_, downsample_.get(), sum_, dy, ctx, need_dx);
}

void BasicBlock::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  main_.Register(prefix, out);
  if (downsample_) downsample_->Register(prefix + "downsample.", out);
}

// ---- Bottleneck ----

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int stride) {
  const int64_t out = planes * kExpansion;
  main_.Add("conv1", std::make_unique<Conv2d>(inplanes, planes, 1, 1, Conv2d::kSame, false));
  main_.Add("bn1", std::make_unique<BatchNorm2d>(planes));
  main_.Add("", std::make_unique<ReLU>());
  main_.Add("conv2", std::make_unique<Conv2d>(planes, planes, 3, stride, Conv2d::kSame, false));
  main_.Add("bn2", std::make_unique<BatchNorm2d>(planes));
  main_.Add("", std::make_unique<ReLU>());
  main_.Add("conv3", std::make_unique<Conv2d>(planes, out, 1, 1, Conv2d::kSame, false));
  main_.Add("bn3", std::make_unique<BatchNorm2d>(out));
  if (stride != 1 || inplanes != out) downsample_ = MakeDownsample(inplanes, out, stride);
}

Result<const Tensor*> Bottleneck::Forward(const Tensor& x, const RunContext& ctx) {
  return ResidualForward(main_, downsample_.get(), x, ctx, &sum_);
}

Result<Tensor*> Bottleneck::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  return ResidualBackward(main_, downsample_.get(), sum_, dy, ctx, need_dx);
}

void Bottleneck::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  main_.Register(prefix, out);
  if (downsample_) downsample_->Register(prefix + "downsample.", out);
}

// ---- DenseBlock ----

namespace {

// dst[n, c0 + c] = src[n, c] for c < src channels (copy) or += (accumulate),
// one sample per task; the planes of one sample are contiguous in both.
void ChannelRange(const Tensor& src, int64_t c0, bool accumulate, Tensor* dst) {
  const int64_t n = src.dim(0), plane = src.dim(2) * src.dim(3);
  const int64_t count = src.dim(1) * plane, src_stride = count;
  const int64_t dst_stride = dst->dim(1) * plane;
  ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float* s = src.data() + i * src_stride;
      float* d = dst->data() + i * dst_stride + c0 * plane;
      if (accumulate) {
        Axpy(1.0f, s, count, d);
      } else {
        std::memcpy(d, s, sizeof(float) * count);
      }
    }
  });
}

// out = channels [c0, c0 + c) of src.
void ExtractChannels(const Tensor& src, int64_t c0, int64_t c, Tensor* out) {
  const int64_t n = src.dim(0), plane = src.dim(2) * src.dim(3);
  out->Resize({n, c, src.dim(2), src.dim(3)});
  const int64_t src_stride = src.dim(1) * plane, count = c * plane;
  ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(out->data() + i * count, src.data() + i * src_stride + c0 * plane,
                  sizeof(float) * count);
    }
  });
}

}  // namespace

DenseBlock::DenseBlock(int num_layers, int64_t in_channels, int64_t growth, int64_t bn_size)
    : num_layers_(num_layers), in_channels_(in_channels), growth_(growth),
      concat_(num_layers + 1) {
  for (int i = 0; i < num_layers; ++i) {
    const int64_t c = in_channels + i * growth, inner = bn_size * growth;
    auto layer = std::make_unique<Sequential>();
    layer->Add("norm1", std::make_unique<BatchNorm2d>(c));
    layer->Add("relu1", std::make_unique<ReLU>());
    layer->Add("conv1", std::make_unique<Conv2d>(c, inner, 1, 1, Conv2d::kSame, false));
    layer->Add("norm2", std::make_unique<BatchNorm2d>(inner));
    layer->Add("relu2", std::make_unique<ReLU>());
    layer->Add("conv2", std::make_unique<Conv2d>(inner, growth, 3, 1, Conv2d::kSame, false));
    layers_.push_back(std::move(layer));
  }
}

Result<const Tensor*> DenseBlock::Forward(const Tensor& x, const RunContext& ctx) {
  if (x.rank() != 4 || x.dim(1) != in_channels_) {
    return Status::InvalidArgument("dense block expects " + std::to_string(in_channels_) +
                                   " input channels, got " + ShapeToString(x.shape()));
  }
  x_ = &x;
  for (int i = 0; i < num_layers_; ++i) {
    const Tensor& in = i == 0 ? x : concat_[i];
    XW_ASSIGN_OR_RETURN(const Tensor* fresh, layers_[i]->Forward(in, ctx));
    XW_RETURN_IF_ERROR(ChannelConcat({&in, fresh}, &concat_[i + 1]));
  }
  return num_layers_ == 0 ? x_ : &concat_[num_layers_];
}

Result<Tensor*> DenseBlock::Backward(Tensor& dy, const RunContext& ctx, bool need_dx) {
  // grad_ accumulates dL/d(concatenation); layer i's output gradient is its
  // slice, and its input gradient adds into the channels before it. Layers
  // are visited last to first, so the accumulation order is fixed.
  grad_.Resize(dy.shape());
  std::memcpy(grad_.data(), dy.data(), sizeof(float) * dy.size());
  for (int i = num_layers_ - 1; i >= 0; --i) {
    const int64_t c_in = in_channels_ + i * growth_;
    ExtractChannels(grad_, c_in, growth_, &slice_);
    const bool need = i > 0 || need_dx;
    XW_ASSIGN_OR_RETURN(Tensor * dcat, layers_[i]->Backward(slice_, ctx, need));
    if (need) ChannelRange(*dcat, 0, /*accumulate=*/true, &grad_);
  }
  if (!need_dx) return static_cast<Tensor*>(nullptr);
  ExtractChannels(grad_, 0, in_channels_, &dx_);
  return &dx_;
}

void DenseBlock::Register(const std::string& prefix, std::vector<StateEntry>* out) {
  for (int i = 0; i < num_layers_; ++i) {
    layers_[i]->Register(prefix + "denselayer" + std::to_string(i + 1) + ".", out);
  }
}

std::unique_ptr<Sequential> MakeDenseTransition(int64_t in_channels, int64_t out_channels) {
  auto t = std::make_unique<Sequential>();
  t->Add("norm", std::make_unique<BatchNorm2d>(in_channels));
  t->Add("relu", std::make_unique<ReLU>());
  t->Add("conv", std::make_unique<Conv2d>(in_channels, out_channels, 1, 1, Conv2d::kSame, false));
  t->Add("pool", std::make_unique<AvgPool2d>(2, 2));
  return t;
}

}  // namespace xw
