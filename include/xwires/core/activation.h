// Elementwise activations, forward and backward.
//
// Any shape. Elementwise work is split with xw::ParallelFor; no reductions,
// so results never depend on the thread count. Thread-compatible.
#ifndef XWIRES_CORE_ACTIVATION_H_
#define XWIRES_CORE_ACTIVATION_H_

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// y = max(x, 0); NaN inputs propagate (as both frameworks do). y is resized
// to x's shape and may be &x (in place).
Status ReluForward(const Tensor& x, Tensor* y);

// dx = dy where ref > 0, else 0 (the gradient at exactly 0 is 0, as in
// PyTorch and TensorFlow). ref is the forward input x or output y (same sign
// pattern). dy and ref must have the same shape; dx is resized to it and may
// be &dy (in place). Returns InvalidArgument on a shape mismatch.
Status ReluBackward(const Tensor& ref, const Tensor& dy, Tensor* dx);

}  // namespace xw

#endif  // XWIRES_CORE_ACTIVATION_H_
