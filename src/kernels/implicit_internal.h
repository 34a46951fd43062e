// Internal: the implicit-GEMM convolution's layout, padding and helpers,
// shared by the pixel-vector tiles (conv_implicit.cc), the channel-vector
// tiles (conv_implicit_channels.cc) and the direct algorithm's exact-order
// tiles (conv_implicit_exact.cc). AVX-512 builds only.
#ifndef XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_
#define XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_

#if defined(__AVX512F__)

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/simd.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

// ThreadScratch slot of the padded images inside the drivers' ParallelFor
// bodies (slot 1 holds a body's second buffer: transposed gradients or lane
// chains). The patch-matrix paths use slots 0-2 only outside these calls.
inline constexpr int kPadSlot = 0;

// Where every tap of every output slot reads in a padded image.
struct ImplicitLayout {
  int64_t taps = 0, plane = 0;
  int64_t slots = 0;           // 16-pixel slots; 0 unless ImplicitApplies
  int64_t ph = 0, pw = 0;      // padded (phase) image extents
  int64_t image_floats = 0;    // one padded image: stride^2 phases x channels x ph x pw
  bool half = false;           // output rows of 8: a slot is two rows, two 8-float loads
  std::vector<int64_t> tap;    // [taps] offset of tap t
  std::vector<int64_t> base;   // [slots][2] offsets of a slot's (half) rows
};

// The layout of the taps of source `s`.
ImplicitLayout MakeLayout(const TapSource& s);

// Writes image n of the source, as the layout reads it, to pad
// (l.image_floats floats).
void PadImage(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad);

// Software prefetches (to L2) of the next image's source, spread over the
// current image's tiles: padding is bound by memory and the tiles by FMA
// throughput, so the fetch hides behind the arithmetic. Touches nothing.
class Prefetcher {
 public:
  // Fetches floats [data, data + floats) in `steps` about equal steps;
  // data == nullptr fetches nothing.
  Prefetcher(const float* data, int64_t floats, int64_t steps)
      : p_(reinterpret_cast<const char*>(data)),
        end_(data ? p_ + floats * static_cast<int64_t>(sizeof(float)) : p_),
        per_step_(data ? (floats * 4 / 64 + steps - 1) / std::max<int64_t>(steps, 1) : 0) {}
  void Step() {
    for (int64_t i = 0; i < per_step_ && p_ < end_; ++i, p_ += 64) {
      _mm_prefetch(p_, _MM_HINT_T1);
    }
  }

 private:
  const char* p_;
  const char* end_;
  int64_t per_step_;
};

// Largest tile height of {6, 4, 2, 1} (forward) or {4, 2, 1} that fits.
inline int TileRows(int64_t left, int most) {
  for (int r : {6, 4, 2, 1}) {
    if (r <= most && r <= left) return r;
  }
  return 1;
}

// 16 patch entries of tap offset `t` for the slot with bases b[0], b[1].
template <bool kHalf>
inline __m512 LoadSlot(const float* p, const int64_t* b) {
  if constexpr (kHalf) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p + b[0])),
                              _mm256_loadu_ps(p + b[1]), 1);
  } else {
    return _mm512_loadu_ps(p + b[0]);
  }
}

// Weights [out_ch, taps] in output-channel blocks of TileRows(., 6) rows:
// block [o0, o0 + R) as wp[o0 * taps + t * R + r], for broadcasting.
AlignedFloats PackWeightBlocks(const float* w, int64_t out_ch, int64_t taps);

// body(n, pad, next) for every image n < images, in parallel chunks of 4
// images: pad is image n as the layout reads it (PadImage, per-thread
// scratch), and next prefetches image n+1's source over `tiles` Step()s.
// The body must not call ParallelFor.
void ForEachPaddedImage(const TapSource& src, const ImplicitLayout& l, int64_t images,
                        int64_t tiles,
                        const std::function<void(int64_t, const float*, Prefetcher&)>& body);

// acc + a*b: one rounding with fma, else a rounded product then a rounded add.
inline __m512 Accumulate(__m512 acc, __m512 a, __m512 b, bool fma) {
  return fma ? _mm512_fmadd_ps(a, b, acc) : _mm512_add_ps(acc, _mm512_mul_ps(a, b));
}

// out[r*stride + 16v + i] = the chain over taps t = first, first + step, ...
// of wp[t*R + r] * patch(t, slot s0 + v, lane i) (Accumulate with kFma),
// then + bias[r] if bias is not null. R output channels x V slots; base = l.base + 2*s0, wp = the
// channel block's weights (PackWeightBlocks). The im2col forward is the
// whole chain (first 0, step 1, FMA); the direct algorithm's lanesK orders
// run one chain per call.
template <int R, int V, bool kHalf, bool kFma>
void TapTile(const float* img, const ImplicitLayout& l, const int64_t* base, const float* wp,
             int64_t first, int64_t step, const float* bias, float* out, int64_t stride) {
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const int64_t* tap = l.tap.data();
  for (int64_t t = first; t < l.taps; t += step) {
    const float* p = img + tap[t];
    __m512 x[V];
    for (int v = 0; v < V; ++v) x[v] = LoadSlot<kHalf>(p, base + 2 * v);
    for (int r = 0; r < R; ++r) {
      const __m512 w = _mm512_set1_ps(wp[t * R + r]);
      for (int v = 0; v < V; ++v) acc[r][v] = Accumulate(acc[r][v], w, x[v], kFma);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      __m512 y = acc[r][v];
      if (bias != nullptr) y = _mm512_add_ps(y, _mm512_set1_ps(bias[r]));
      _mm512_storeu_ps(out + r * stride + 16 * v, y);
    }
  }
}

// TapTile for r in {6, 4, 2, 1} and v in {4, 2, 1} (TileRows' sizes).
template <bool kHalf, bool kFma>
void TapTileAny(int r, int v, const float* img, const ImplicitLayout& l, const int64_t* base,
                const float* wp, int64_t first, int64_t step, const float* bias, float* out,
                int64_t stride) {
#define XW_TAP(R_, V_)                                                                      \
  if (r == R_ && v == V_)                                                                   \
    return TapTile<R_, V_, kHalf, kFma>(img, l, base, wp, first, step, bias, out, stride);
#define XW_TAP_R(R_) XW_TAP(R_, 4) XW_TAP(R_, 2) XW_TAP(R_, 1)
  XW_TAP_R(6) XW_TAP_R(4) XW_TAP_R(2) XW_TAP_R(1)
#undef XW_TAP_R
#undef XW_TAP
}

// Channel-vector tiles (conv_implicit_channels.cc): output channels in the
// vector lanes and pixels broadcast, for 8-pixel rows where two-row pixel
// vectors would need a shuffle per load; out_ch must be a multiple of 16.
bool ChannelTilesApply(const ImplicitLayout& l, int64_t out_ch);
void ChannelPatchGemm(const TapSource& src, const ImplicitLayout& l, int64_t images,
                      int64_t out_ch, const float* w, const float* bias, float* y);
void ChannelBackwardFilter(const TapSource& src, const ImplicitLayout& l, int64_t images,
                           int64_t out_ch, const float* dy, int64_t per, float* dw);

// gt[j * out_ch + o] = g[o * plane + j]: one image's gradient pixel-major,
// for the channel-vector filter tiles.
void PixelMajor(const float* g, int64_t out_ch, int64_t plane, float* gt);

// Offsets of the output pixels j in [0, l.plane) of an ow-wide output grid
// in a padded (phase) plane of the layout.
std::vector<int64_t> PixelOffsets(const ImplicitLayout& l, int64_t ow);

}  // namespace kernels
}  // namespace xw

#endif  // __AVX512F__
#endif  // XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_
