// Structural tensor operations: residual add, channel concatenation (and its
// gradient split), flatten, and the elementwise helpers optimizers need.
//
// Elementwise work is split with xw::ParallelFor over independent outputs;
// nothing here reduces, so results never depend on the thread count.
// Thread-compatible. Shape mismatches return InvalidArgument naming both
// shapes.
#ifndef XWIRES_CORE_TENSOR_OPS_H_
#define XWIRES_CORE_TENSOR_OPS_H_

#include <cstdint>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// Residual add: y = a + b (same shape). y is resized and may be &a or &b.
Status AddForward(const Tensor& a, const Tensor& b, Tensor* y);
// Residual add then ReLU in one pass: y = relu(a + b), bit for bit
// AddForward then ReluForward (NaN propagates). y is resized and may be &a
// or &b.
Status AddReluForward(const Tensor& a, const Tensor& b, Tensor* y);
// Gradient of y = a + b: da = dy and db = dy (each resized, nullable).
Status AddBackward(const Tensor& dy, Tensor* da, Tensor* db);

// NCHW channel concatenation (DenseNet): inputs [N, C_i, H, W] with equal N,
// H, W -> y [N, sum C_i, H, W] in input order. Inputs must be non-null and
// must not include y. y is resized.
Status ChannelConcat(const std::vector<const Tensor*>& inputs, Tensor* y);
// Gradient of ChannelConcat: splits dy [N, sum C_i, H, W] into dxs[i]
// [N, C_i, H, W] with C_i = channels[i] (sum must equal dy's C). A null
// dxs[i] skips that slice. Each non-null dxs[i] is resized.
Status ChannelSplit(const Tensor& dy, const std::vector<int64_t>& channels,
                    const std::vector<Tensor*>& dxs);

// Flatten is a reshape, not a copy: [N, C, H, W] -> [N, C*H*W] keeps NCHW
// (c, h, w) order, PyTorch's nn.Flatten order. (Keras flattens NHWC (h, w, c)
// order; since every xwires profile stores NCHW, dense weights are laid out
// for the (c, h, w) order in both.) Any rank >= 1 works: [N, ...] -> [N, rest].
// The gradient is the inverse reshape (Tensor::Reshape back to x's shape).
Status Flatten(Tensor* x);

// x[i] *= alpha.
void Scale(float* x, int64_t n, float alpha);
// y[i] += alpha * x[i]; with fma the update is std::fma(alpha, x[i], y[i])
// (one rounding), as vectorised framework kernels such as ATen's
// add(alpha=) do; otherwise a rounded product then a rounded add.
void Axpy(float alpha, const float* x, int64_t n, float* y, bool fma = false);
// Tensor forms; Axpy requires x and y of the same shape.
void Scale(Tensor* x, float alpha);
Status Axpy(float alpha, const Tensor& x, Tensor* y, bool fma = false);

}  // namespace xw

#endif  // XWIRES_CORE_TENSOR_OPS_H_
