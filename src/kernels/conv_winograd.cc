// kWinograd: F(2x2, 3x3) convolution (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) for 3x3 stride-1 kernels with any
// padding. Each 2x2 output tile is A^T [ (G g G^T) . (B^T d B) ] A over a 4x4
// input tile d; the sum over input channels of the element-wise products is
// 16 independent [O, C] x [C, tiles] GEMMs on Eigen's sgemm. The data
// gradient is the same algorithm on dy with the flipped, transposed kernel;
// the filter gradient uses the im2col GEMM (conv.cc).
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/gemm_internal.h"
#include "src/kernels/simd.h"
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

// d (4x4) -> B^T d B. T is float or V16 (16 tiles at once).
template <typename T>
inline void InputTransform(const T d[4][4], T v[4][4]) {
  T t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[0][j] - d[2][j];
    t[1][j] = d[1][j] + d[2][j];
    t[2][j] = d[2][j] - d[1][j];
    t[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {
    v[i][0] = t[i][0] - t[i][2];
    v[i][1] = t[i][1] + t[i][2];
    v[i][2] = t[i][2] - t[i][1];
    v[i][3] = t[i][1] - t[i][3];
  }
}

// m (4x4) -> A^T m A (2x2).
template <typename T>
inline void OutputTransform(const T m[4][4], T y[2][2]) {
  T t[2][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = m[0][j] + m[1][j] + m[2][j];
    t[1][j] = m[1][j] - m[2][j] - m[3][j];
  }
  for (int i = 0; i < 2; ++i) {
    y[i][0] = t[i][0] + t[i][1] + t[i][2];
    y[i][1] = t[i][1] - t[i][2] - t[i][3];
  }
}

// ThreadScratch slots of a tile batch: transformed inputs, transformed
// outputs, and one plane's tile columns.
constexpr int kVSlot = 0, kMSlot = 1, kColsSlot = 2;

// Tiles are transformed 16 at a time along a tile row, so every load and
// store of the transforms is a contiguous vector.
constexpr int64_t kTileBlock = 16;

// For one input plane: cols[(r * 4 + j) * ldc + tj] = x(r - pad_top,
// 2*tj + j - pad_left) (zero outside), r < 2*th + 2, tj < ldc. Row r, column
// phase j of every tile, contiguous over tiles.
void TileColumns(const ConvGeometry& g, const float* plane, int64_t th, int64_t ldc,
                 float* cols) {
  for (int64_t r = 0; r < 2 * th + 2; ++r) {
    const int64_t u = r - g.pad_top;
    for (int j = 0; j < 4; ++j) {
      float* dst = cols + (r * 4 + j) * ldc;
      if (u < 0 || u >= g.h) {
        std::fill(dst, dst + ldc, 0.0f);
        continue;
      }
      const float* row = plane + u * g.w;
      for (int64_t tj = 0; tj < ldc; ++tj) {
        const int64_t v = 2 * tj + j - g.pad_left;
        dst[tj] = (v >= 0 && v < g.w) ? row[v] : 0.0f;
      }
    }
  }
}

// v[(e*C + c)*nt + tile] for image n (tiles from `tile0`) and channel c.
void InputTiles(const ConvGeometry& g, const float* cols, int64_t ldc, int64_t th, int64_t tw,
                int64_t c, int64_t tile0, int64_t nt, float* v) {
  for (int64_t ti = 0; ti < th; ++ti) {
    for (int64_t tj = 0; tj < tw; tj += kTileBlock) {
      V16 d[4][4], vt[4][4];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) d[i][j] = LoadV(cols + ((2 * ti + i) * 4 + j) * ldc + tj);
      }
      InputTransform(d, vt);
      const int64_t count = std::min(kTileBlock, tw - tj), tile = tile0 + ti * tw + tj;
      for (int e = 0; e < 16; ++e) {
        float* dst = v + (e * g.c + c) * nt + tile;
        if (count == kTileBlock) {
          StoreV(dst, vt[e / 4][e % 4]);
        } else {
          for (int64_t k = 0; k < count; ++k) dst[k] = vt[e / 4][e % 4][k];
        }
      }
    }
  }
}

// y plane of (image, channel o) from m[(e*O + o)*nt + tile] (m readable 16
// floats past its end), plus bias.
void OutputTiles(const ConvGeometry& g, const float* m, int64_t nt, int64_t th, int64_t tw,
                 int64_t o, int64_t tile0, const float* bias, float* out) {
  for (int64_t ti = 0; ti < th; ++ti) {
    for (int64_t tj = 0; tj < tw; tj += kTileBlock) {
      const int64_t tile = tile0 + ti * tw + tj, count = std::min(kTileBlock, tw - tj);
      V16 mt[4][4], yt[2][2];
      for (int e = 0; e < 16; ++e) mt[e / 4][e % 4] = LoadV(m + (e * g.o + o) * nt + tile);
      OutputTransform(mt, yt);
      for (int i = 0; i < 2 && 2 * ti + i < g.oh; ++i) {
        float* row = out + (2 * ti + i) * g.ow;
        for (int64_t k = 0; k < count; ++k) {
          for (int j = 0; j < 2 && 2 * (tj + k) + j < g.ow; ++j) {
            row[2 * (tj + k) + j] = bias != nullptr ? yt[i][j][k] + bias[o] : yt[i][j][k];
          }
        }
      }
    }
  }
}

}  // namespace

void WinogradForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     float* y) {
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2, tiles_per_image = th * tw;
  std::vector<float> u(16 * g.o * g.c);
  TransformKernels(w, g.o, g.c, u.data());
  // Images per group: ~256 tiles per GEMM, fixed by the geometry.
  const int64_t per = std::clamp<int64_t>(256 / tiles_per_image, 1, g.n);
  const int64_t ldc = (tw + kTileBlock - 1) / kTileBlock * kTileBlock;
  ParallelFor(g.n, per, [&](int64_t n0, int64_t n1) {
    const int64_t nt = (n1 - n0) * tiles_per_image;
    float* v = ThreadScratch(kVSlot, 16 * g.c * nt);
    float* m = ThreadScratch(kMSlot, 16 * g.o * nt + kTileBlock);
    float* cols = ThreadScratch(kColsSlot, (2 * th + 2) * 4 * ldc);
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t c = 0; c < g.c; ++c) {
        TileColumns(g, x + (n * g.c + c) * g.h * g.w, th, ldc, cols);
        InputTiles(g, cols, ldc, th, tw, c, (n - n0) * tiles_per_image, nt, v);
      }
    }
    for (int e = 0; e < 16; ++e) {
      EigenGemm(u.data() + e * g.o * g.c, g.c, v + e * g.c * nt, nt, m + e * g.o * nt, nt, g.o,
                nt, g.c, false, false, false);
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t o = 0; o < g.o; ++o) {
        OutputTiles(g, m, nt, th, tw, o, (n - n0) * tiles_per_image, bias,
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
  std::vector<float> wt(g.c * g.o * 9);  // [C][O][3][3], flipped
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t c = 0; c < g.c; ++c) {
      for (int k = 0; k < 9; ++k) wt[(c * g.o + o) * 9 + k] = w[(o * g.c + c) * 9 + 8 - k];
    }
  }
  WinogradForward(t, dy, wt.data(), nullptr, dx);
}

}  // namespace kernels
}  // namespace xw
