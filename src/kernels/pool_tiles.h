// Internal: max pooling's 2x2, stride-2 windows on the dispatched SIMD
// target (pool_tiles.cc).
#ifndef XWIRES_SRC_KERNELS_POOL_TILES_H_
#define XWIRES_SRC_KERNELS_POOL_TILES_H_

#include <cstdint>

namespace xw {
namespace kernels {

// One plane of w input columns: out[r * ow + o] = the maximum of the 2x2
// window at rows 2r, 2r+1 and columns 2o, 2o+1 (the first of equal values in
// row-major order; the first NaN wins), idx[r * ow + o] = its index in the
// plane, for r < oh, o < ow. Requires 2 * oh <= the plane's rows and
// 2 * ow <= w. The same outputs on every target.
void MaxPool2x2Plane(const float* in, int64_t w, int64_t oh, int64_t ow, float* out,
                     int32_t* idx);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_POOL_TILES_H_
