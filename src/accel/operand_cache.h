// Internal: the rounded operands of the operand-rounding-only route
// (accel_conv.cc, accel_matmul.cc), kept in an AccelOperandCache
// (accel_ops.h) from a layer's forward to its backward.
#ifndef XWIRES_SRC_ACCEL_OPERAND_CACHE_H_
#define XWIRES_SRC_ACCEL_OPERAND_CACHE_H_

#include "xwires/core/accel_numerics.h"
#include "xwires/core/accel_ops.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace accel {

// `t` rounded per `mode` into `dst`, which is resized only when its shape
// differs, so storage reused from an earlier call is written once, not
// zeroed first.
void RoundInto(const Tensor& t, OperandRounding mode, bool flush_bf16_subnormals, Tensor* dst);

struct RoundedPair {
  const Tensor* x;
  const Tensor* w;
};

// The forward's rounded x and w, rounded into `cache` (marked valid, with
// the sources' storage noted) or, without one, into `local`.
RoundedPair RoundForward(const Tensor& x, const Tensor& w, OperandRounding mode, bool flush,
                         AccelOperandCache* cache, AccelOperandCache* local);
// The backward's: the cache's when the forward filled it from this x and w,
// otherwise rounded into `local`. Clears the cache's `valid`.
RoundedPair RoundBackward(const Tensor& x, const Tensor& w, OperandRounding mode, bool flush,
                          AccelOperandCache* cache, AccelOperandCache* local);

}  // namespace accel
}  // namespace xw

#endif  // XWIRES_SRC_ACCEL_OPERAND_CACHE_H_
