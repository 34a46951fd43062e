// The input and output transforms of the F(2x2, 3x3) Winograd convolution
// (winograd_internal.h), one vector of tiles along a tile row at a time, so
// every load and store of the transforms is contiguous. Compiled for every
// SIMD target; each lane is one tile's element-wise arithmetic, so the bits
// are the same on every target.
#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/winograd_tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/hwy_copy.h"
#include "src/kernels/winograd_internal.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

// d (4x4) -> B^T d B, one tile per lane.
HWY_INLINE void InputTransform(const VF d[4][4], VF v[4][4]) {
  VF t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = hn::Sub(d[0][j], d[2][j]);
    t[1][j] = hn::Add(d[1][j], d[2][j]);
    t[2][j] = hn::Sub(d[2][j], d[1][j]);
    t[3][j] = hn::Sub(d[1][j], d[3][j]);
  }
  for (int i = 0; i < 4; ++i) {
    v[i][0] = hn::Sub(t[i][0], t[i][2]);
    v[i][1] = hn::Add(t[i][1], t[i][2]);
    v[i][2] = hn::Sub(t[i][2], t[i][1]);
    v[i][3] = hn::Sub(t[i][1], t[i][3]);
  }
}

// m (4x4) -> A^T m A (2x2), left to right as written.
HWY_INLINE void OutputTransform(const VF m[4][4], VF y[2][2]) {
  VF t[2][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = hn::Add(hn::Add(m[0][j], m[1][j]), m[2][j]);
    t[1][j] = hn::Sub(hn::Sub(m[1][j], m[2][j]), m[3][j]);
  }
  for (int i = 0; i < 2; ++i) {
    y[i][0] = hn::Add(hn::Add(t[i][0], t[i][1]), t[i][2]);
    y[i][1] = hn::Sub(hn::Sub(t[i][1], t[i][2]), t[i][3]);
  }
}

// cols[(r * 4 + j) * ldc + tj] = x(r - pad_top, 2*tj + j - pad_left) (zero
// outside), r < 2*th + 2, tj < ldc: row r, column phase j of every tile,
// contiguous over tiles.
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

}  // namespace

void InputTilesT(const ConvGeometry& g, const float* plane, int64_t c, int64_t tile0,
                 int64_t nt, float* cols, float* v) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2;
  const int64_t ldc = (tw + kWinogradBlock - 1) / kWinogradBlock * kWinogradBlock;
  TileColumns(g, plane, th, ldc, cols);
  for (int64_t ti = 0; ti < th; ++ti) {
    for (int64_t tj = 0; tj < tw; tj += n) {  // ldc is a multiple of n
      VF dt[4][4], vt[4][4];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) dt[i][j] = hn::LoadU(d, cols + ((2 * ti + i) * 4 + j) * ldc + tj);
      }
      InputTransform(dt, vt);
      const int64_t count = std::min(n, tw - tj), tile = tile0 + ti * tw + tj;
      for (int e = 0; e < 16; ++e) StorePrefix(d, vt[e / 4][e % 4], count, v + (e * g.c + c) * nt + tile);
    }
  }
}

void OutputTilesT(const ConvGeometry& g, const float* m, int64_t nt, int64_t o, int64_t tile0,
                  const float* bias, float* out) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2;
  for (int64_t ti = 0; ti < th; ++ti) {
    for (int64_t tj = 0; tj < tw; tj += n) {
      const int64_t tile = tile0 + ti * tw + tj, count = std::min(n, tw - tj);
      VF mt[4][4], yt[2][2];
      // Lanes past `count` read the next tiles or the slack past m: unused.
      for (int e = 0; e < 16; ++e) mt[e / 4][e % 4] = hn::LoadU(d, m + (e * g.o + o) * nt + tile);
      OutputTransform(mt, yt);
      if (bias != nullptr) {
        const VF b = hn::Set(d, bias[o]);
        for (int i = 0; i < 2; ++i) {
          for (int j = 0; j < 2; ++j) yt[i][j] = hn::Add(yt[i][j], b);
        }
      }
      for (int i = 0; i < 2 && 2 * ti + i < g.oh; ++i) {
        float* row = out + (2 * ti + i) * g.ow + 2 * tj;
        if (2 * (tj + n) <= g.ow) {  // whole tiles: columns 2k, 2k+1 interleaved
          hn::StoreInterleaved2(yt[i][0], yt[i][1], d, row);
          continue;
        }
        HWY_ALIGN float col[2][HWY_LANES(float)];
        hn::Store(yt[i][0], d, col[0]);
        hn::Store(yt[i][1], d, col[1]);
        for (int64_t k = 0; k < count; ++k) {
          for (int j = 0; j < 2 && 2 * (tj + k) + j < g.ow; ++j) row[2 * k + j] = col[j][k];
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(InputTilesT);
HWY_EXPORT(OutputTilesT);

void WinogradInputTiles(const ConvGeometry& g, const float* plane, int64_t c, int64_t tile0,
                        int64_t nt, float* cols, float* v) {
  HWY_DYNAMIC_DISPATCH(InputTilesT)(g, plane, c, tile0, nt, cols, v);
}

void WinogradOutputTiles(const ConvGeometry& g, const float* m, int64_t nt, int64_t o,
                         int64_t tile0, const float* bias, float* out) {
  HWY_DYNAMIC_DISPATCH(OutputTilesT)(g, m, nt, o, tile0, bias, out);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
