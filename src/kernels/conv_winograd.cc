// kWinograd: F(2x2, 3x3) convolution (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) for 3x3 stride-1 kernels with any
// padding. Each 2x2 output tile is A^T [ (G g G^T) . (B^T d B) ] A over a 4x4
// input tile d; the sum over input channels of the element-wise products is
// 16 independent [O, C] x [C, tiles] GEMMs on Eigen's sgemm. The data
// gradient is the same algorithm on dy with the flipped, transposed kernel;
// the filter gradient uses the im2col GEMM (conv.cc). The tile transforms are
// dispatched Highway code (winograd_tiles.cc, the same bits on every target);
// this file keeps Eigen's GEMM, which is compiled for the build machine.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/gemm_internal.h"
#include "src/kernels/winograd_internal.h"
#include "src/scratch_floats.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

namespace {

// U[e][o][c] = (G g G^T)[e] for every (o, c) 3x3 kernel g.
void TransformKernels(const float* w, int64_t o_count, int64_t c_count, float* u) {
  const int64_t oc = o_count * c_count;
  for (int64_t k = 0; k < oc; ++k) {
    const float* g = w + k * 9;
    float gg[4][3];  // G g
    for (int j = 0; j < 3; ++j) {
      gg[0][j] = g[j];
      gg[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
      gg[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
      gg[3][j] = g[6 + j];
    }
    for (int i = 0; i < 4; ++i) {  // (G g) G^T
      const float r[4] = {gg[i][0], 0.5f * (gg[i][0] + gg[i][1] + gg[i][2]),
                          0.5f * (gg[i][0] - gg[i][1] + gg[i][2]), gg[i][2]};
      for (int j = 0; j < 4; ++j) u[(i * 4 + j) * oc + k] = r[j];
    }
  }
}

// ThreadScratch slots of a tile batch: transformed inputs, transformed
// outputs, and one plane's tile columns.
constexpr int kVSlot = 0, kMSlot = 1, kColsSlot = 2;

}  // namespace

void WinogradForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     float* y) {
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2, tiles_per_image = th * tw;
  ScratchFloats u(16 * g.o * g.c);  // TransformKernels writes all of it
  TransformKernels(w, g.o, g.c, u.data());
  // Images per group: ~256 tiles per GEMM, fixed by the geometry.
  const int64_t per = std::clamp<int64_t>(256 / tiles_per_image, 1, g.n);
  ParallelFor(g.n, per, [&](int64_t n0, int64_t n1) {
    const int64_t nt = (n1 - n0) * tiles_per_image;
    float* v = ThreadScratch(kVSlot, 16 * g.c * nt);
    float* m = ThreadScratch(kMSlot, 16 * g.o * nt + kWinogradBlock);
    float* cols = ThreadScratch(kColsSlot, WinogradColsFloats(th, tw));
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t c = 0; c < g.c; ++c) {
        WinogradInputTiles(g, x + (n * g.c + c) * g.h * g.w, c, (n - n0) * tiles_per_image, nt,
                           cols, v);
      }
    }
    for (int e = 0; e < 16; ++e) {
      EigenGemm(u.data() + e * g.o * g.c, g.c, v + e * g.c * nt, nt, m + e * g.o * nt, nt, g.o,
                nt, g.c, false, false, false);
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t o = 0; o < g.o; ++o) {
        WinogradOutputTiles(g, m, nt, o, (n - n0) * tiles_per_image, bias,
                            y + (n * g.o + o) * g.oh * g.ow);
      }
    }
  });
}

void WinogradBackwardData(const ConvGeometry& g, const float* w, const float* dy, float* dx) {
  // Stride-1 transposed convolution: pads become 2 - pad (top/left) so that
  // output pixel h reads dy rows h - 2 + pad_top ... h + pad_top.
  const int pt = 2 - g.pad_top, pl = 2 - g.pad_left;
  if (pt < 0 || pl < 0 || g.pad_bottom > 2 || g.pad_right > 2) {
    Im2colBackwardData(g, w, dy, dx);
    return;
  }
  ConvGeometry t = g;
  t.c = g.o, t.h = g.oh, t.w = g.ow;
  t.o = g.c, t.oh = g.h, t.ow = g.w;
  t.pad_top = pt, t.pad_left = pl, t.pad_bottom = 2 - g.pad_bottom, t.pad_right = 2 - g.pad_right;
  ScratchFloats wt(g.c * g.o * 9);  // [C][O][3][3], flipped; written whole
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t c = 0; c < g.c; ++c) {
      for (int k = 0; k < 9; ++k) wt[(c * g.o + o) * 9 + k] = w[(o * g.c + c) * 9 + 8 - k];
    }
  }
  WinogradForward(t, dy, wt.data(), nullptr, dx);
}

}  // namespace kernels
}  // namespace xw
