// 2-D pooling over NCHW activations, forward and backward.
//
// Output size per axis: out = floor((in + pad_before + pad_after - k) / stride)
// + 1 (no ceil mode). Padding may be asymmetric so both PyTorch's symmetric
// `padding=p` and TensorFlow's "SAME" (extra pad at the bottom/right, see
// SamePadding) are expressible. Each pad must be < the kernel size on its
// axis, so every window holds at least one real input element.
//
// Work is split over (n, c) planes with xw::ParallelFor; within a plane the
// order of every sum and scatter is fixed (row-major over outputs and window
// positions), so results are bitwise identical for any thread count.
// Thread-compatible. Outputs must not alias inputs.
#ifndef XWIRES_CORE_POOLING_H_
#define XWIRES_CORE_POOLING_H_

#include <cstdint>
#include <vector>

#include "xwires/core/reduce.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

struct Pool2dSpec {
  int kernel_h = 2, kernel_w = 2;
  int stride_h = 2, stride_w = 2;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  // Average pooling only: divide by kernel_h * kernel_w (true, PyTorch's
  // default) or by the number of real (non-padding) elements in the window
  // (false, TensorFlow's behaviour).
  bool count_include_pad = true;

  // Square kernel k, stride s, symmetric padding p (PyTorch style).
  static Pool2dSpec Square(int k, int s, int p = 0,
                           bool count_include_pad = true);
};

// TensorFlow "SAME" padding for one axis: out = ceil(in / stride),
// total = max((out - 1) * stride + k - in, 0), before = total / 2,
// after = total - before.
void TfSamePads(int64_t in, int k, int stride, int* pad_before,
                 int* pad_after);

// Output shape [N, C, OH, OW] for input shape [N, C, H, W]; InvalidArgument
// for a bad rank, non-positive kernel/stride, negative pad, pad >= kernel,
// or a window larger than the padded input.
Result<Shape> Pool2dOutputShape(const Shape& x, const Pool2dSpec& spec);

// Max pooling. Padding never wins a max (it is skipped, not treated as
// -inf or 0). Ties go to the first element in row-major window order; a NaN
// wins and propagates (PyTorch's rule). y is resized to the output shape;
// argmax (required) is resized to y.size() and receives, per output, the
// flat index h * W + w of the chosen element within its input plane.
Status MaxPool2dForward(const Tensor& x, const Pool2dSpec& spec, Tensor* y,
                        std::vector<int32_t>* argmax);
// dx (resized to x_shape, zero-filled) receives dy routed to the argmax
// positions; overlapping windows accumulate in output row-major order.
Status MaxPool2dBackward(const Tensor& dy, const std::vector<int32_t>& argmax,
                         const Shape& x_shape, const Pool2dSpec& spec,
                         Tensor* dx);

// The order in which max pooling's backward adds the gradients of
// overlapping windows whose maximum is the same input element: what a GPU
// does with atomic adds (cuDNN's max-pooling backward; profile key
// `accelerator.scatter_order`). Every element's addends are added into +0:
// in output row-major order (random false: the function above), or in the
// order ScatterPermutation(seed, step, tensor, e, count) (accel_numerics.h)
// draws for element e (the flat index into dx) over its `count` addends
// listed in output row-major order. Elements with at most one addend (every
// element when windows do not overlap) are the same either way.
struct PoolScatterOrder {
  bool random = false;
  uint64_t seed = 0, step = 0, tensor = 0;
};
Status MaxPool2dBackward(const Tensor& dy, const std::vector<int32_t>& argmax,
                         const Shape& x_shape, const Pool2dSpec& spec,
                         const PoolScatterOrder& order, Tensor* dx);

// Average pooling: each window's real elements are gathered in row-major
// order, summed with xw::Sum(reduce) and divided by the divisor
// (count_include_pad decides it). y is resized to the output shape.
Status AvgPool2dForward(const Tensor& x, const Pool2dSpec& spec,
                        const ReduceSpec& reduce, Tensor* y);
// dx (resized to x_shape, zero-filled) += dy / divisor over every window
// covering each element, in output row-major order.
Status AvgPool2dBackward(const Tensor& dy, const Shape& x_shape,
                         const Pool2dSpec& spec, Tensor* dx);

// Global average pooling [N, C, H, W] -> [N, C]: Sum(plane, reduce) / (H*W).
Status GlobalAvgPoolForward(const Tensor& x, const ReduceSpec& reduce,
                            Tensor* y);
// dx (resized to x_shape) = dy[n, c] / (H*W) broadcast over the plane.
Status GlobalAvgPoolBackward(const Tensor& dy, const Shape& x_shape,
                             Tensor* dx);

}  // namespace xw

#endif  // XWIRES_CORE_POOLING_H_
