// Internal: the dispatched kernels' fused multiply-add (MulAddExact in
// fma_emu-inl.h) over arrays, on the SIMD target dispatch chooses now, so it
// can be checked against std::fma on every target.
#ifndef XWIRES_SRC_KERNELS_FMA_LANES_H_
#define XWIRES_SRC_KERNELS_FMA_LANES_H_

#include <cstdint>

namespace xw {
namespace kernels {

// out[i] = a[i] * b[i] + c[i] with one rounding, for i < n (n >= 0), a
// vector of the target's float lanes at a time (a partial last vector is
// padded). out may alias a, b or c. Thread-safe.
void FmaLanes(const float* a, const float* b, const float* c, int64_t n, float* out);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_FMA_LANES_H_
