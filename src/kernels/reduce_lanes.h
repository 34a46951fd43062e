// Internal: reduce.cc's lanesK order over K-term strips, on the dispatched
// SIMD target (reduce_lanes.cc). Lane l of the K lanes accumulates terms
// l, l + K, l + 2K, ... in order, so a vector of lanes is K chains advancing
// together: the bits are those of the scalar loop on every target.
#ifndef XWIRES_SRC_KERNELS_REDUCE_LANES_H_
#define XWIRES_SRC_KERNELS_REDUCE_LANES_H_

#include <cstdint>

namespace xw {
namespace kernels {

// For k in {4, 8, 16} and len a multiple of k: lane[l] = lane[l] + term(i)
// for the terms i = l, l + k, ... < len in order, with term(i) = a[i] - sa
// (b == nullptr), else (a[i] - sa) * (b[i] - sb) added with one rounding
// (fma) or as a rounded product then a rounded add.
void LanesStrips(const float* a, float sa, const float* b, float sb, bool fma, int k,
                 int64_t len, float* lane);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_REDUCE_LANES_H_
