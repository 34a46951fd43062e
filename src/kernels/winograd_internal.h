// Internal: the tile transforms of the F(2x2, 3x3) Winograd convolution
// (conv_winograd.cc), on Highway: winograd_tiles.cc is compiled for every
// SIMD target and dispatched at run time. The transforms are element-wise
// adds and subtracts per tile (no reduction), so every target gives the same
// bits; only the Eigen GEMMs between them depend on the ISA.
#ifndef XWIRES_SRC_KERNELS_WINOGRAD_INTERNAL_H_
#define XWIRES_SRC_KERNELS_WINOGRAD_INTERNAL_H_

#include <cstdint>

#include "xwires/core/conv.h"

namespace xw {
namespace kernels {

// Tile rows are padded to a multiple of this many tiles: a multiple of every
// target's float lanes, so the scratch layouts do not depend on the target.
inline constexpr int64_t kWinogradBlock = 16;

// Floats of the per-plane tile-column scratch WinogradInputTiles needs.
inline int64_t WinogradColsFloats(int64_t th, int64_t tw) {
  return (2 * th + 2) * 4 * ((tw + kWinogradBlock - 1) / kWinogradBlock * kWinogradBlock);
}

// v[(e*C + c)*nt + tile0 + ti*tw + tj] = (B^T d B)[e] for the 4x4 input tile d
// of every output tile (ti, tj) of one input plane (channel c of an image;
// zero outside the plane), th x tw tiles. `cols` is scratch of
// WinogradColsFloats(th, tw) floats.
void WinogradInputTiles(const ConvGeometry& g, const float* plane, int64_t c, int64_t tile0,
                        int64_t nt, float* cols, float* v);

// The output plane of channel o of an image, out[p * ow + q], from
// m[(e*O + o)*nt + tile0 + ti*tw + tj] (A^T m A per tile, plus bias[o] if
// bias is not null). m must be readable kWinogradBlock floats past its end.
void WinogradOutputTiles(const ConvGeometry& g, const float* m, int64_t nt, int64_t o,
                         int64_t tile0, const float* bias, float* out);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_WINOGRAD_INTERNAL_H_
