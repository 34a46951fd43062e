// Channel-vector tiles of the implicit-GEMM convolution: for output rows of
// 8 pixels a 16-lane pixel vector spans two rows and costs a shuffle per
// load, so these tiles put 16 output channels in the lanes instead and
// broadcast one patch entry per pixel. The arithmetic per output is the same
// FMA chain over the taps in index order (forward); the filter gradient
// accumulates each (o, t) over the batch's pixels in order.
#include <algorithm>
#include <vector>

#include "src/kernels/implicit_internal.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

#if defined(__AVX512F__)

namespace xw {
namespace kernels {

namespace {

// ThreadScratch slot of the transposed output gradient (kPadSlot holds the
// padded images at the same time).
constexpr int kGradSlot = 1;

// Lane i of a vector stored at o0 + i goes to y[(o0 + i) * plane + j].
inline void ScatterChannels(float* y, int64_t plane, __m512 v) {
  const __m512i idx = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(static_cast<int32_t>(plane)));
  _mm512_i32scatter_ps(y, idx, v, 4);
}

// y[(o0 + 16v + i) * plane + j0 + j] = sum over taps t in order of
// wq[t][o0 + 16v + i] * patch(t, pixel j0 + j) (+ bias): VO channel vectors
// x NJ pixels. wq points at [0][o0] of the [taps][out_ch] weights, y at
// channel o0, pixel j0 of the image.
template <int VO, int NJ>
void ForwardTile(const float* img, const ImplicitLayout& l, const int64_t* pix, const float* wq,
                 int64_t out_ch, const float* bias, float* y) {
  __m512 acc[NJ][VO];
  for (int j = 0; j < NJ; ++j) {
    for (int v = 0; v < VO; ++v) acc[j][v] = _mm512_setzero_ps();
  }
  const int64_t* tap = l.tap.data();
  for (int64_t t = 0; t < l.taps; ++t) {
    __m512 w[VO];
    for (int v = 0; v < VO; ++v) w[v] = _mm512_loadu_ps(wq + t * out_ch + 16 * v);
    const float* p = img + tap[t];
    for (int j = 0; j < NJ; ++j) {
      const __m512 x = _mm512_set1_ps(p[pix[j]]);
      for (int v = 0; v < VO; ++v) acc[j][v] = _mm512_fmadd_ps(w[v], x, acc[j][v]);
    }
  }
  for (int v = 0; v < VO; ++v) {
    const __m512 b = bias ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
    for (int j = 0; j < NJ; ++j) {
      const __m512 out = bias ? _mm512_add_ps(acc[j][v], b) : acc[j][v];
      ScatterChannels(y + 16 * v * l.plane + j, l.plane, out);
    }
  }
}

// part[(t0 + u) * out_ch + o0 + 16v + i] (+)= sum over the batch's images
// and pixels, in order, of dy(o0 + 16v + i) * patch(t0 + u): VO channel
// vectors x U taps. dyt is the batch's gradient as [image][pixel][out_ch]
// at channel o0.
template <int VO, int U>
void FilterTile(const float* pads, const float* dyt, int64_t count, int64_t out_ch,
                const ImplicitLayout& l, const int64_t* pix, int64_t t0, bool accumulate,
                float* part) {
  __m512 acc[U][VO];
  for (int u = 0; u < U; ++u) {
    for (int v = 0; v < VO; ++v) acc[u][v] = _mm512_setzero_ps();
  }
  const int64_t* tap = l.tap.data() + t0;
  for (int64_t i = 0; i < count; ++i) {
    const float* img = pads + i * l.image_floats;
    const float* g = dyt + i * l.plane * out_ch;
    for (int64_t j = 0; j < l.plane; ++j) {
      __m512 d[VO];
      for (int v = 0; v < VO; ++v) d[v] = _mm512_loadu_ps(g + j * out_ch + 16 * v);
      const float* p = img + pix[j];
      for (int u = 0; u < U; ++u) {
        const __m512 x = _mm512_set1_ps(p[tap[u]]);
        for (int v = 0; v < VO; ++v) acc[u][v] = _mm512_fmadd_ps(d[v], x, acc[u][v]);
      }
    }
  }
  for (int u = 0; u < U; ++u) {
    for (int v = 0; v < VO; ++v) {
      float* dst = part + (t0 + u) * out_ch + 16 * v;
      const __m512 s = accumulate ? _mm512_add_ps(_mm512_loadu_ps(dst), acc[u][v]) : acc[u][v];
      _mm512_storeu_ps(dst, s);
    }
  }
}

// Channel vectors per tile: 4, 2 or 1, as many as are left.
int ChannelVectors(int64_t left) { return left >= 64 ? 4 : left >= 32 ? 2 : 1; }

void ForwardTileAny(int vo, int nj, const float* img, const ImplicitLayout& l,
                    const int64_t* pix, const float* wq, int64_t out_ch, const float* bias,
                    float* y) {
#define XW_CH_FWD(VO_, NJ_) \
  if (vo == VO_ && nj == NJ_) return ForwardTile<VO_, NJ_>(img, l, pix, wq, out_ch, bias, y);
#define XW_CH_FWD_VO(VO_) XW_CH_FWD(VO_, 6) XW_CH_FWD(VO_, 4) XW_CH_FWD(VO_, 2) XW_CH_FWD(VO_, 1)
  XW_CH_FWD_VO(4) XW_CH_FWD_VO(2) XW_CH_FWD_VO(1)
#undef XW_CH_FWD_VO
#undef XW_CH_FWD
}

void FilterTileAny(int vo, int u, const float* pads, const float* dyt, int64_t count,
                   int64_t out_ch, const ImplicitLayout& l, const int64_t* pix, int64_t t0,
                   bool accumulate, float* part) {
#define XW_CH_FLT(VO_, U_)                                                             \
  if (vo == VO_ && u == U_)                                                            \
    return FilterTile<VO_, U_>(pads, dyt, count, out_ch, l, pix, t0, accumulate, part);
#define XW_CH_FLT_VO(VO_) XW_CH_FLT(VO_, 6) XW_CH_FLT(VO_, 4) XW_CH_FLT(VO_, 2) XW_CH_FLT(VO_, 1)
  XW_CH_FLT_VO(4) XW_CH_FLT_VO(2) XW_CH_FLT_VO(1)
#undef XW_CH_FLT_VO
#undef XW_CH_FLT
}

}  // namespace

std::vector<int64_t> PixelOffsets(const ImplicitLayout& l, int64_t ow) {
  std::vector<int64_t> pix(l.plane);
  for (int64_t j = 0; j < l.plane; ++j) pix[j] = (j / ow) * l.pw + j % ow;
  return pix;
}

void PixelMajor(const float* g, int64_t out_ch, int64_t plane, float* gt) {
  if (out_ch % 16 != 0 || plane % 16 != 0) {
    for (int64_t o = 0; o < out_ch; ++o) {
      for (int64_t j = 0; j < plane; ++j) gt[j * out_ch + o] = g[o * plane + j];
    }
    return;
  }
  for (int64_t o = 0; o < out_ch; o += 16) {
    for (int64_t j = 0; j < plane; j += 16) {
      Transpose16x16(g + o * plane + j, plane, gt + j * out_ch + o, out_ch);
    }
  }
}

bool ChannelTilesApply(const ImplicitLayout& l, int64_t out_ch) {
  // A tile streams taps x 64 weights and its 64 channels of the batch's
  // gradient; past ~1k taps (VGG's 256-channel layers) those leave L2 and
  // the pixel-vector tiles, whose operands stay in L1, are faster.
  return l.half && out_ch % 16 == 0 && l.taps <= 1024;
}

void ChannelPatchGemm(const TapSource& src, const ImplicitLayout& l, int64_t images,
                      int64_t out_ch, const float* w, const float* bias, float* y) {
  AlignedFloats wq(l.taps * out_ch);  // [taps][out_ch]
  for (int64_t o = 0; o < out_ch; ++o) {
    for (int64_t t = 0; t < l.taps; ++t) wq[t * out_ch + o] = w[o * l.taps + t];
  }
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  const int64_t tiles = (out_ch + 63) / 64 * ((l.plane + 5) / 6);
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* yn = y + n * out_ch * l.plane;
    for (int64_t o0 = 0; o0 < out_ch;) {
      const int vo = ChannelVectors(out_ch - o0);
      for (int64_t j0 = 0; j0 < l.plane;) {
        next.Step();
        const int nj = TileRows(l.plane - j0, 6);
        ForwardTileAny(vo, nj, pad, l, pix.data() + j0, wq.data() + o0, out_ch,
                       bias ? bias + o0 : nullptr, yn + o0 * l.plane + j0);
        j0 += nj;
      }
      o0 += 16 * vo;
    }
  });
}

void ChannelBackwardFilter(const TapSource& src, const ImplicitLayout& l, int64_t images,
                           int64_t out_ch, const float* dy, int64_t per, float* dw) {
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  // FilterBatches' schedule, as ImplicitBackwardFilter; partials are [taps][out_ch].
  const auto partials = FilterBatches(
      images, per, l.taps * out_ch,
      [&](float* part, int64_t n0, int64_t k, bool first, int64_t) {
        float* pads = ThreadScratch(kPadSlot, k * l.image_floats);
        float* dyt = ThreadScratch(kGradSlot, k * l.plane * out_ch);
        for (int64_t i = 0; i < k; ++i) {
          PadImage(src, l, n0 + i, pads + i * l.image_floats);
          PixelMajor(dy + (n0 + i) * out_ch * l.plane, out_ch, l.plane,
                     dyt + i * l.plane * out_ch);
        }
        for (int64_t o0 = 0; o0 < out_ch;) {
          const int vo = ChannelVectors(out_ch - o0);
          for (int64_t t0 = 0; t0 < l.taps;) {
            const int u = TileRows(l.taps - t0, 6);
            FilterTileAny(vo, u, pads, dyt + o0, k, out_ch, l, pix.data(), t0, !first, part + o0);
            t0 += u;
          }
          o0 += 16 * vo;
        }
      });
  for (int64_t o = 0; o < out_ch; ++o) {
    for (int64_t t = 0; t < l.taps; ++t) {
      float s = partials[0][t * out_ch + o];
      for (size_t gi = 1; gi < partials.size(); ++gi) s += partials[gi][t * out_ch + o];
      dw[o * l.taps + t] = s;
    }
  }
}

}  // namespace kernels
}  // namespace xw

#endif  // __AVX512F__
