// Internal: OperandRounding over arrays on every SIMD target
// (round_lanes.cc, Highway). dst[i] = RoundOperand(src[i], mode, flush) for
// i < n, bit for bit (NaN payloads, Inf, subnormals, overflow and ties
// included); dst may equal src. Runs on the calling thread.
#ifndef XWIRES_SRC_ACCEL_ROUND_LANES_H_
#define XWIRES_SRC_ACCEL_ROUND_LANES_H_

#include <cstdint>

#include "xwires/core/accel_numerics.h"

namespace xw {
namespace accel {

void RoundLanes(const float* src, float* dst, int64_t n, OperandRounding mode,
                bool flush_bf16_subnormals);

}  // namespace accel
}  // namespace xw

#endif  // XWIRES_SRC_ACCEL_ROUND_LANES_H_
