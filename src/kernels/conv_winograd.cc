// kWinograd: F(2x2, 3x3) convolution (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) for 3x3 stride-1 kernels with any
// padding. Each 2x2 output tile is A^T [ (G g G^T) . (B^T d B) ] A over a 4x4
// input tile d; the sum over input channels of the element-wise products is
// 16 independent [O, C] x [C, tiles] GEMMs (PatchProduct: under gemm "owned"
// each output one TapOrder chain over the channels on the ordered GEMM, the
// same bits on every target; under "eigen" Eigen's sgemm, compiled for the
// build machine). The data gradient is the same algorithm on dy with the
// flipped, transposed kernel; the filter gradient uses the im2col one
// (conv.cc). The tile transforms are dispatched Highway code
// (winograd_tiles.cc, the same bits on every target).
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
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
  // Per kernel, in parallel: 512 x 512 kernels took a VGG 2x2 layer's
  // Winograd call 5 ms on one thread.
  ParallelFor(oc, GrainFor(oc, 256, 16), [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
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
  });
}

// ThreadScratch slots of a tile batch: transformed inputs, transformed
// outputs, and one plane's tile columns.
constexpr int kVSlot = 0, kMSlot = 1, kColsSlot = 2;

// One group of images [n0, n1) (nt tiles), as WinogradForward batches them:
// input transforms into v ([16][C][nt]), the 16 GEMMs into m ([16][O][nt],
// readable kWinogradBlock floats past its end), output transforms.
void InputGroup(const ConvGeometry& g, const float* x, int64_t n0, int64_t n1, int64_t nt,
                float* v) {
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2;
  float* cols = ThreadScratch(kColsSlot, WinogradColsFloats(th, tw));
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      WinogradInputTiles(g, x + (n * g.c + c) * g.h * g.w, c, (n - n0) * th * tw, nt, cols, v);
    }
  }
}

void GemmOne(const ConvGeometry& g, const float* u, const float* v, int64_t nt, int e,
             const KernelNumerics& num, float* m) {
  PatchProduct(u + e * g.o * g.c, v + e * g.c * nt, m + e * g.o * nt, g.o, nt, g.c, false, false,
               false, num);
}

void OutputGroup(const ConvGeometry& g, const float* m, int64_t n0, int64_t n1, int64_t nt,
                 const float* bias, float* y) {
  const int64_t tiles_per_image = (g.oh + 1) / 2 * ((g.ow + 1) / 2);
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      WinogradOutputTiles(g, m, nt, o, (n - n0) * tiles_per_image, bias,
                          y + (n * g.o + o) * g.oh * g.ow);
    }
  }
}

}  // namespace

void WinogradForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const KernelNumerics& num, float* y) {
  const int64_t tiles_per_image = (g.oh + 1) / 2 * ((g.ow + 1) / 2);
  ScratchFloats u(16 * g.o * g.c);  // TransformKernels writes all of it
  TransformKernels(w, g.o, g.c, u.data());
  // Images per group: ~256 tiles per GEMM, fixed by the geometry. The
  // groups' GEMM shapes fix the bits, whatever runs them in parallel.
  const int64_t per = std::clamp<int64_t>(256 / tiles_per_image, 1, g.n);
  const int64_t groups = (g.n + per - 1) / per;
  if (groups >= 4) {  // a group per task, its buffers per thread
    ParallelFor(g.n, per, [&](int64_t n0, int64_t n1) {
      const int64_t nt = (n1 - n0) * tiles_per_image;
      float* v = ThreadScratch(kVSlot, 16 * g.c * nt);
      float* m = ThreadScratch(kMSlot, 16 * g.o * nt + kWinogradBlock);
      InputGroup(g, x, n0, n1, nt, v);
      for (int e = 0; e < 16; ++e) GemmOne(g, u.data(), v, nt, e, num, m);
      OutputGroup(g, m, n0, n1, nt, bias, y);
    });
    return;
  }
  // Few groups (small planes: VGG's 2x2 layers are one group of 128
  // images) would leave threads idle: every group's buffers at once, and
  // each phase parallel over images or over the 16 GEMMs of every group.
  const int64_t full_nt = per * tiles_per_image;
  const int64_t v_floats = 16 * g.c * full_nt, m_floats = 16 * g.o * full_nt + kWinogradBlock;
  ScratchFloats v(groups * v_floats), m(groups * m_floats);
  const auto nt_of = [&](int64_t gi) {
    return (std::min(g.n, (gi + 1) * per) - gi * per) * tiles_per_image;
  };
  ParallelFor(g.n, 1, [&](int64_t a, int64_t b) {
    for (int64_t n = a; n < b; ++n) {
      const int64_t gi = n / per;
      // Image n alone, at its place in its group's tile columns.
      InputGroup(g, x, n, n + 1, nt_of(gi),
                 v.data() + gi * v_floats + (n - gi * per) * tiles_per_image);
    }
  });
  ParallelFor(groups * 16, 1, [&](int64_t a, int64_t b) {
    for (int64_t i = a; i < b; ++i) {
      const int64_t gi = i / 16;
      GemmOne(g, u.data(), v.data() + gi * v_floats, nt_of(gi), static_cast<int>(i % 16), num,
              m.data() + gi * m_floats);
    }
  });
  ParallelFor(g.n, 1, [&](int64_t a, int64_t b) {
    for (int64_t n = a; n < b; ++n) {
      const int64_t gi = n / per;
      OutputGroup(g, m.data() + gi * m_floats + (n - gi * per) * tiles_per_image, n, n + 1,
                  nt_of(gi), bias, y);
    }
  });
}

void WinogradBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                          const KernelNumerics& num, float* dx) {
  // Stride-1 transposed convolution: pads become 2 - pad (top/left) so that
  // output pixel h reads dy rows h - 2 + pad_top ... h + pad_top.
  const int pt = 2 - g.pad_top, pl = 2 - g.pad_left;
  if (pt < 0 || pl < 0 || g.pad_bottom > 2 || g.pad_right > 2) {
    Im2colBackwardData(g, w, dy, num, dx);
    return;
  }
  ConvGeometry t = g;
  t.c = g.o, t.h = g.oh, t.w = g.ow;
  t.o = g.c, t.oh = g.h, t.ow = g.w;
  t.pad_top = pt, t.pad_left = pl, t.pad_bottom = 2 - g.pad_bottom, t.pad_right = 2 - g.pad_right;
  ScratchFloats wt(g.c * g.o * 9);  // [C][O][3][3], flipped; written whole
  ParallelFor(g.c, GrainFor(g.c, 8, 16), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      for (int64_t o = 0; o < g.o; ++o) {
        for (int k = 0; k < 9; ++k) wt[(c * g.o + o) * 9 + k] = w[(o * g.c + c) * 9 + 8 - k];
      }
    }
  });
  WinogradForward(t, dy, wt.data(), nullptr, num, dx);
}

}  // namespace kernels
}  // namespace xw
