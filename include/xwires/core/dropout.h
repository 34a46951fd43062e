// Inverted dropout, forward and backward.
//
// Element i (flat index, any shape) is kept iff rng.Uniform(offset + i) >= p,
// and kept elements are scaled by scale = 1.0f / (1.0f - p) in float, as
// PyTorch and TensorFlow both do (y = x * scale). The mask is a pure function
// of (rng seed, stream, offset, i): callers derive the stream from the layer
// name and the step (xw::MixStream), so any thread computes the same mask.
// Elementwise work uses xw::ParallelFor. Thread-compatible.
#ifndef XWIRES_CORE_DROPOUT_H_
#define XWIRES_CORE_DROPOUT_H_

#include <cstdint>

#include "xwires/core/rng.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// p in [0, 1] (InvalidArgument otherwise; p = 1 drops everything). When
// training is false or p == 0 this is the identity: y = x, mask = 1.
// y is resized to x's shape and may be &x. mask, when non-null, is resized
// to x's shape and receives the per-element multiplier (scale or 0, or 1 for
// the identity), which is all the backward pass needs.
Status DropoutForward(const Tensor& x, float p, const Philox& rng,
                      uint64_t offset, bool training, Tensor* y, Tensor* mask);

// dx = dy * mask (elementwise; shapes must match). dx is resized and may be
// &dy.
Status DropoutBackward(const Tensor& dy, const Tensor& mask, Tensor* dx);

}  // namespace xw

#endif  // XWIRES_CORE_DROPOUT_H_
