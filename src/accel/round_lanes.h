// Internal: OperandRounding over arrays on every SIMD target
// (round_lanes.cc, Highway; one vector's recipes in round_bits-inl.h).
// dst[i] = RoundOperand(src[i], mode, flush) for i < n, bit for bit (NaN
// payloads, Inf, subnormals, overflow and ties included); dst may equal
// src. Runs on the calling thread.
#ifndef XWIRES_SRC_ACCEL_ROUND_LANES_H_
#define XWIRES_SRC_ACCEL_ROUND_LANES_H_

#include <cstdint>

#include "xwires/core/accel_numerics.h"

namespace xw {
namespace accel {

void RoundLanes(const float* src, float* dst, int64_t n, OperandRounding mode,
                bool flush_bf16_subnormals);

// dst[r * dst_ld + c] = RoundOperand(src[r * src_ld + c], mode, flush) for
// r < rows, c < cols: a block of rows copied and rounded in one pass (the
// packing of a GEMM operand). Rows must not overlap unless dst == src.
void RoundRows(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
               int64_t dst_ld, OperandRounding mode, bool flush_bf16_subnormals);

}  // namespace accel
}  // namespace xw

#endif  // XWIRES_SRC_ACCEL_ROUND_LANES_H_
