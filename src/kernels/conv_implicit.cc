// The im2col GEMMs without the patch matrix, as Eigen's SpatialConvolution
// (TensorFlow's CPU convolution) does: its contraction mapper reads patch
// entries straight from the image instead of materializing im2col. Here the
// source image is copied once, zero-padded (and for stride s split into s*s
// phases), so that tap t of 16 consecutive output pixels of a row is one
// contiguous 16-float load at slot_base + tap_offset[t]. Register tiles of
// output channels x pixel vectors then accumulate over the taps with FMA,
// each output in tap order, as Eigen's GEBP kernel does.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/kernels/simd.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

#if defined(__AVX512F__)

ImplicitLayout MakeLayout(const TapSource& s) {
  ImplicitLayout l;
  const int st = s.stride;
  l.taps = s.channels * s.kh * s.kw;
  l.plane = s.oh * s.ow;
  l.ph = s.oh + (s.kh - 1) / st;
  l.pw = s.ow + (s.kw - 1) / st;
  l.image_floats = int64_t{st} * st * s.channels * l.ph * l.pw;
  l.half = s.ow == 8;
  l.tap.resize(l.taps);
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int a = 0; a < s.kh; ++a) {
      for (int b = 0; b < s.kw; ++b) {
        const int64_t phase = (a % st) * st + b % st;
        l.tap[(c * s.kh + a) * s.kw + b] =
            ((phase * s.channels + c) * l.ph + a / st) * l.pw + b / st;
      }
    }
  }
  // Pixel-vector slots only where ImplicitApplies (channel-vector tiles read
  // pixels one by one and take any grid).
  l.slots = ImplicitApplies(s) ? l.plane / 16 : 0;
  l.base.resize(2 * l.slots);
  for (int64_t sl = 0; sl < l.slots; ++sl) {
    if (l.half) {
      l.base[2 * sl] = 2 * sl * l.pw;
      l.base[2 * sl + 1] = (2 * sl + 1) * l.pw;
    } else {
      const int64_t per_row = s.ow / 16;
      l.base[2 * sl] = l.base[2 * sl + 1] = (sl / per_row) * l.pw + 16 * (sl % per_row);
    }
  }
  return l;
}

// Lanes [from, to) of 16, clamped.
static inline __mmask16 Lanes(int64_t from, int64_t to) {
  from = std::clamp<int64_t>(from, 0, 16), to = std::clamp<int64_t>(to, 0, 16);
  return from >= to ? __mmask16{0}
                    : static_cast<__mmask16>(((uint32_t{1} << to) - 1) &
                                             ~((uint32_t{1} << from) - 1));
}

// pad[phase (pa, pb)][c][i][j] = source (n, c, i*s + pa - pad_top,
// j*s + pb - pad_left), zero outside the source. Stride-1 rows are masked
// 16-lane copies (rows are only 10-34 floats long); lanes outside the source
// are never read (masked loads do not fault). Addresses are formed as
// integers, since a row's first lane may lie before the source row.
void PadImage(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad) {
  const int st = s.stride;
  for (int pb = 0; pb < st; ++pb) {
    // Columns j in [lo, hi) read source column j*s + first; the rest are 0.
    const int64_t first = pb - s.pad_left;
    const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : (-first + st - 1) / st, 0, l.pw);
    const int64_t hi =
        std::clamp<int64_t>(first > s.w - 1 ? 0 : (s.w - 1 - first) / st + 1, lo, l.pw);
    const int64_t chunks = (l.pw + 15) / 16;
    __mmask16 load[8], keep[8];  // stride 1: per 16-column chunk (pw <= 128)
    const bool masked = st == 1 && chunks <= 8;
    for (int64_t k = 0; masked && k < chunks; ++k) {
      load[k] = Lanes(lo - 16 * k, hi - 16 * k);
      keep[k] = Lanes(0, l.pw - 16 * k);
    }
    for (int pa = 0; pa < st; ++pa) {
      for (int64_t c = 0; c < s.channels; ++c) {
        const float* src = s.data + (n * s.channels + c) * s.h * s.w;
        float* dst = pad + (((int64_t{pa} * st + pb) * s.channels + c) * l.ph) * l.pw;
        for (int64_t i = 0; i < l.ph; ++i, dst += l.pw) {
          const int64_t u = i * st + pa - s.pad_top;
          if (u < 0 || u >= s.h) {
            std::fill(dst, dst + l.pw, 0.0f);
            continue;
          }
          const float* row = src + u * s.w;
          if (masked) {
            const uintptr_t base = reinterpret_cast<uintptr_t>(row) + first * sizeof(float);
            for (int64_t k = 0; k < chunks; ++k) {
              const float* p = reinterpret_cast<const float*>(base + 64 * k);
              _mm512_mask_storeu_ps(dst + 16 * k, keep[k], _mm512_maskz_loadu_ps(load[k], p));
            }
            continue;
          }
          std::fill(dst, dst + lo, 0.0f);
          for (int64_t j = lo; j < hi; ++j) dst[j] = row[j * st + first];
          std::fill(dst + hi, dst + l.pw, 0.0f);
        }
      }
    }
  }
}

namespace {

// dw[r*taps + u] (+)= sum over the images' slots of dy(r) * patch(u): R
// output channels x U taps from tap t0. Lanes accumulate in slot order and
// are then summed by a fixed tree.
template <int R, int U, bool kHalf>
void FilterTile(const float* pads, const float* dy, int64_t images, int64_t out_ch,
                const ImplicitLayout& l, int64_t t0, bool accumulate, float* dw) {
  __m512 acc[R][U];
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) acc[r][u] = _mm512_setzero_ps();
  }
  const int64_t* tap = l.tap.data() + t0;
  for (int64_t i = 0; i < images; ++i) {
    const float* img = pads + i * l.image_floats;
    const float* g = dy + i * out_ch * l.plane;
    for (int64_t sl = 0; sl < l.slots; ++sl) {
      const int64_t* b = l.base.data() + 2 * sl;
      __m512 d[R];
      for (int r = 0; r < R; ++r) d[r] = _mm512_loadu_ps(g + r * l.plane + 16 * sl);
      for (int u = 0; u < U; ++u) {
        const __m512 x = LoadSlot<kHalf>(img + tap[u], b);
        for (int r = 0; r < R; ++r) acc[r][u] = _mm512_fmadd_ps(d[r], x, acc[r][u]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) {
      const float s = _mm512_reduce_add_ps(acc[r][u]);
      float& dst = dw[r * l.taps + t0 + u];
      dst = accumulate ? dst + s : s;
    }
  }
}

template <bool kHalf>
void FilterTileAny(int r, int u, const float* pads, const float* dy, int64_t images,
                   int64_t out_ch, const ImplicitLayout& l, int64_t t0, bool accumulate,
                   float* dw) {
#define XW_FLT(R_)                                                                        \
  case R_:                                                                                \
    if (u == 6) return FilterTile<R_, 6, kHalf>(pads, dy, images, out_ch, l, t0, accumulate, dw); \
    if (u == 4) return FilterTile<R_, 4, kHalf>(pads, dy, images, out_ch, l, t0, accumulate, dw); \
    if (u == 2) return FilterTile<R_, 2, kHalf>(pads, dy, images, out_ch, l, t0, accumulate, dw); \
    return FilterTile<R_, 1, kHalf>(pads, dy, images, out_ch, l, t0, accumulate, dw);
  switch (r) {
    XW_FLT(4)
    XW_FLT(2)
    XW_FLT(1)
  }
#undef XW_FLT
}

}  // namespace

bool ImplicitApplies(const TapSource& s) {
  return (s.ow % 16 == 0) || (s.ow == 8 && s.oh % 2 == 0);
}

AlignedFloats PackWeightBlocks(const float* w, int64_t out_ch, int64_t taps) {
  AlignedFloats wp(out_ch * taps);
  for (int64_t o0 = 0; o0 < out_ch;) {
    const int r = TileRows(out_ch - o0, 6);
    for (int64_t t = 0; t < taps; ++t) {
      for (int i = 0; i < r; ++i) wp[o0 * taps + t * r + i] = w[(o0 + i) * taps + t];
    }
    o0 += r;
  }
  return wp;
}

void ForEachPaddedImage(const TapSource& src, const ImplicitLayout& l, int64_t images,
                        int64_t tiles,
                        const std::function<void(int64_t, const float*, Prefetcher&)>& body) {
  const int64_t source_floats = src.channels * src.h * src.w;
  ParallelFor(images, 4, [&](int64_t n0, int64_t n1) {
    float* pad = ThreadScratch(kPadSlot, l.image_floats);
    for (int64_t n = n0; n < n1; ++n) {
      PadImage(src, l, n, pad);
      // The next image's source, fetched while this one's tiles compute.
      Prefetcher next(n + 1 < n1 ? src.data + (n + 1) * source_floats : nullptr,
                      source_floats, tiles);
      body(n, pad, next);
    }
  });
}

void ImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                       const float* bias, float* y) {
  const ImplicitLayout l = MakeLayout(src);
  if (ChannelTilesApply(l, out_ch)) return ChannelPatchGemm(src, l, images, out_ch, w, bias, y);
  const AlignedFloats wp = PackWeightBlocks(w, out_ch, l.taps);
  const int64_t tiles = (out_ch + 5) / 6 * ((l.slots + 3) / 4);
  const auto run = l.half ? TapTileAny<true, true> : TapTileAny<false, true>;
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* yn = y + n * out_ch * l.plane;
    for (int64_t o0 = 0; o0 < out_ch;) {
      const int r = TileRows(out_ch - o0, 6);
      const float* b = bias ? bias + o0 : nullptr;
      for (int64_t s0 = 0; s0 < l.slots;) {
        next.Step();
        const int v = TileRows(l.slots - s0, 4);
        // The whole chain over the taps with FMA, as Eigen's GEBP kernel.
        run(r, v, pad, l, l.base.data() + 2 * s0, wp.data() + o0 * l.taps, 0, 1, b,
            yn + o0 * l.plane + 16 * s0, l.plane);
        s0 += v;
      }
      o0 += r;
    }
  });
}

void ImplicitBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch,
                            const float* dy, int64_t per, float* dw) {
  const ImplicitLayout l = MakeLayout(src);
  if (ChannelTilesApply(l, out_ch)) {
    return ChannelBackwardFilter(src, l, images, out_ch, dy, per, dw);
  }
  const int64_t source_floats = src.channels * src.h * src.w;
  const int64_t tiles = (out_ch + 3) / 4 * ((l.taps + 5) / 6);
  const auto run = l.half ? FilterTileAny<true> : FilterTileAny<false>;
  const auto partials = FilterBatches(
      images, per, out_ch * l.taps,
      [&](float* acc, int64_t n0, int64_t k, bool first, int64_t next_k) {
        float* pads = ThreadScratch(kPadSlot, k * l.image_floats);
        for (int64_t i = 0; i < k; ++i) PadImage(src, l, n0 + i, pads + i * l.image_floats);
        const float* g = dy + n0 * out_ch * l.plane;
        // The group's next batch (source and gradient), fetched during these tiles.
        Prefetcher next_x(next_k ? src.data + (n0 + k) * source_floats : nullptr,
                          next_k * source_floats, tiles);
        Prefetcher next_dy(next_k ? g + k * out_ch * l.plane : nullptr,
                           next_k * out_ch * l.plane, tiles);
        for (int64_t o0 = 0; o0 < out_ch;) {
          const int r = TileRows(out_ch - o0, 4);
          for (int64_t t0 = 0; t0 < l.taps;) {
            next_x.Step();
            next_dy.Step();
            const int u = TileRows(l.taps - t0, 6);
            run(r, u, pads, g + o0 * l.plane, k, out_ch, l, t0, !first, acc + o0 * l.taps);
            t0 += u;
          }
          o0 += r;
        }
      });
  SumPartials(partials, out_ch * l.taps, dw);
}

#else  // !__AVX512F__: the patch-matrix GEMMs serve every geometry.

bool ImplicitApplies(const TapSource&) { return false; }
void ImplicitPatchGemm(const TapSource&, int64_t, int64_t, const float*, const float*, float*) {
  DieWithStatus(Status::Internal("ImplicitPatchGemm needs AVX-512 (see ImplicitApplies)"));
}
void ImplicitBackwardFilter(const TapSource&, int64_t, int64_t, const float*, int64_t, float*) {
  DieWithStatus(Status::Internal("ImplicitBackwardFilter needs AVX-512 (see ImplicitApplies)"));
}

#endif

}  // namespace kernels
}  // namespace xw
