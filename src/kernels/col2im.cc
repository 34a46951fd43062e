// The convolutions' data-gradient scatters (conv_internal.h): col2im, which
// adds a column matrix's taps back into an image's pixels, and the
// interleave of a stride-2 gradient's four phases, written once on Highway
// and compiled for every SIMD target (chosen at run time). col2im adds one
// term per pixel and tap in a fixed order and the interleave only copies,
// so every target writes the same bits.
#include <algorithm>
#include <cstdint>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/col2im.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/hwy_copy.h"
#include "xwires/core/parallel.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

// dst[k] += src[k] for k < len: full vectors, then one masked tail (rows are
// 30-odd wide, so a scalar remainder would cost as much as the body).
HWY_INLINE void AddRow(const float* src, int64_t len, float* dst) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t k = 0;
  for (; k + n <= len; k += n) {
    hn::StoreU(hn::Add(hn::LoadU(d, dst + k), hn::LoadU(d, src + k)), d, dst + k);
  }
  if (k < len) {
    const VF sum = hn::Add(LoadRange(d, dst + k, 0, len - k), LoadRange(d, src + k, 0, len - k));
    StorePrefix(d, sum, len - k, dst + k);
  }
}

// f(d, j) for d the target's vector, then, where narrower, 8 and 4 lanes
// (CappedTag), each from the j the one before returned: the index where a
// run of vector steps stopped. Returns the last j, where scalar code goes on.
template <class F>
HWY_INLINE int64_t NarrowingVectors(int64_t j, const F& f) {
  j = f(DF(), j);
  if constexpr (HWY_LANES(float) > 8) j = f(hn::CappedTag<float, 8>(), j);
  if constexpr (HWY_LANES(float) > 4) j = f(hn::CappedTag<float, 4>(), j);
  return j;
}

// AddRowStride2's pairs of vectors of D's width from q on, while they fit.
template <class D>
HWY_INLINE int64_t AddPairsStride2(D d, const float* src, int64_t hi, int64_t pairs, int64_t q,
                                   float* dst) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  for (; q + n <= hi && q + n <= pairs; q += n) {
    hn::Vec<D> even, odd;
    hn::LoadInterleaved2(d, dst + 2 * q, even, odd);
    hn::StoreInterleaved2(hn::Add(even, hn::LoadU(d, src + q)), odd, d, dst + 2 * q);
  }
  return q;
}

// dst[2q] += src[q] for q in [lo, hi): vectors of the even lanes of
// dst[2q, 2q + 2n), the odd lanes stored back as they were (the same
// floats, one thread per image), where those pairs end within the row
// (q + n <= pairs, the pairs (dst[2q], dst[2q + 1]) the row holds whole);
// whole vectors, then 8 and 4 lanes, then one by one (ResNet's rows are 15
// or 16 outputs). Each float gets the same one addition either way.
HWY_INLINE void AddRowStride2(const float* src, int64_t lo, int64_t hi, int64_t pairs,
                              float* dst) {
  int64_t q = lo;
#if HWY_TARGET != HWY_SCALAR
  q = NarrowingVectors(q, [&](auto d, int64_t from) {
    return AddPairsStride2(d, src, hi, pairs, from, dst);
  });
#endif
  for (; q < hi; ++q) dst[2 * q] += src[q];
}

void Col2imAddT(const ConvGeometry& g, const float* cols, int64_t ld, float* dx_img) {
  const int64_t khw = int64_t{g.kh} * g.kw, s = g.stride;
  // Kernel column b adds outputs q in [lo[b], hi[b]) to input column q*s + b - pad_left.
  std::vector<int64_t> lo(g.kw), hi(g.kw);
  for (int b = 0; b < g.kw; ++b) {
    const int64_t v0 = b - g.pad_left;
    lo[b] = std::min<int64_t>(v0 >= 0 ? 0 : (-v0 + s - 1) / s, g.ow);
    hi[b] = std::clamp<int64_t>(v0 >= g.w ? 0 : (g.w - 1 - v0) / s + 1, lo[b], g.ow);
  }
  for (int64_t t = 0; t < g.c * khw; ++t) {
    float* plane = dx_img + (t / khw) * g.h * g.w;
    const int a = static_cast<int>((t % khw) / g.kw), b = static_cast<int>(t % g.kw);
    for (int64_t p = 0; p < g.oh; ++p) {
      const int64_t u = p * s + a - g.pad_top;
      if (u < 0 || u >= g.h) continue;
      const float* src = cols + t * ld + p * g.ow;
      float* dst = plane + u * g.w + b - g.pad_left;  // + q*s, for q in [lo, hi)
      if (s == 1) {
        AddRow(src + lo[b], hi[b] - lo[b], dst + lo[b]);
      } else if (s == 2) {
        AddRowStride2(src, lo[b], hi[b], (g.w - (b - g.pad_left)) / 2, dst);
      } else {
        for (int64_t q = lo[b]; q < hi[b]; ++q) dst[q * s] += src[q];
      }
    }
  }
}

// dst[2j] = even[j], dst[2j + 1] = odd[j] (zeros for a null row) in
// vectors of D's width from j on, while both rows have them; returns the
// first j left.
template <class D>
HWY_INLINE int64_t InterleaveRow2(D d, const float* even, const float* odd, int64_t len,
                                  int64_t j, float* dst) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  for (; j + n <= len; j += n) {
    const hn::Vec<D> a = even ? hn::LoadU(d, even + j) : hn::Zero(d);
    const hn::Vec<D> b = odd ? hn::LoadU(d, odd + j) : hn::Zero(d);
    hn::StoreInterleaved2(a, b, d, dst + 2 * j);
  }
  return j;
}

// InterleavePhases2 (conv_internal.h): each dx row from its two phases'
// sub-grid rows, vectors of n pixels of each (the target's width, then 8
// and 4) stored as 2n interleaved floats. Copies only, so every target
// writes the same floats.
void InterleavePhases2T(const float* const* subs, const ConvGeometry& g, float* dx) {
  const int64_t sub_h[2] = {(g.h + 1) / 2, g.h / 2}, sub_w[2] = {(g.w + 1) / 2, g.w / 2};
  ParallelFor(g.n * g.c, 16, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      for (int64_t y = 0; y < g.h; ++y) {
        const int rh = static_cast<int>(y % 2);
        const int64_t row = plane * sub_h[rh] + y / 2;
        const float* even = subs[2 * rh] ? subs[2 * rh] + row * sub_w[0] : nullptr;
        const float* odd = subs[2 * rh + 1] ? subs[2 * rh + 1] + row * sub_w[1] : nullptr;
        float* dst = dx + (plane * g.h + y) * g.w;
        if (even == nullptr && odd == nullptr) {
          std::fill(dst, dst + g.w, 0.0f);
          continue;
        }
        int64_t j = NarrowingVectors(0, [&](auto d, int64_t from) {
          return InterleaveRow2(d, even, odd, sub_w[1], from, dst);
        });
        for (; j < sub_w[0]; ++j) {
          dst[2 * j] = even ? even[j] : 0.0f;
          if (2 * j + 1 < g.w) dst[2 * j + 1] = odd ? odd[j] : 0.0f;
        }
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(Col2imAddT);
HWY_EXPORT(InterleavePhases2T);

void Col2imAdd(const ConvGeometry& g, const float* cols, int64_t ld, float* dx_img) {
  HWY_DYNAMIC_DISPATCH(Col2imAddT)(g, cols, ld, dx_img);
}

void InterleavePhases2(const float* const* subs, const ConvGeometry& g, float* dx) {
  HWY_DYNAMIC_DISPATCH(InterleavePhases2T)(subs, g, dx);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
