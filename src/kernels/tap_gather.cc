// Tap gathering shared by the direct and im2col convolutions (conv_internal.h):
// the tap-row gathers and the padding for strides of 2 or more (their
// inverse is col2im.cc, the panel transposes transpose.cc), written once on
// Highway and compiled for every SIMD target (chosen at run time). They
// only move data, so every target writes the same bits; the vector width
// changes only how many floats one copy moves.
#include <algorithm>
#include <cstdint>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/tap_gather.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/hwy_copy.h"
#include "src/kernels/implicit_internal.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

// Vector chunk k of CopyRun1: lanes [lo - k, hi - k) from base + k, zeros
// elsewhere, stored up to len.
HWY_INLINE void CopyChunk(const float* base, int64_t lo, int64_t hi, int64_t len, int64_t k,
                          float* out) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t a = std::clamp<int64_t>(lo - k, 0, n), b = std::clamp<int64_t>(hi - k, a, n);
  VF v;
  if (a == 0 && b == n) {
    v = hn::LoadU(d, base + k);
  } else if (a == b) {
    v = hn::Zero(d);
  } else {
    v = LoadRange(d, base + k, a, b);
  }
  StorePrefix(d, v, std::min(n, len - k), out + k);
}

// out[k] for k < len: base[k] inside [lo, hi), zeros outside (stride 1);
// base[k] is read only in [lo, hi). The chunks wholly inside [lo, hi) are
// plain copies; only those holding lo, hi or len take masks.
HWY_INLINE void CopyRun1(const float* base, int64_t lo, int64_t hi, int64_t len, float* out) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t k = 0;
  for (; k < len && k < lo; k += n) CopyChunk(base, lo, hi, len, k, out);
  for (; k + n <= hi; k += n) hn::StoreU(hn::LoadU(d, base + k), d, out + k);
  for (; k < len; k += n) CopyChunk(base, lo, hi, len, k, out);
}

#if HWY_TARGET != HWY_SCALAR
// Vector chunk k of a stride-2 run: lane j in [a, b) = [lo - k, hi - k)
// (clamped to the vector) is p[2j] with p = src + 2 (k - lo), zeros
// elsewhere. The even lanes of two masked loads that read only from the
// chunk's first to its last source float.
HWY_INLINE VF Stride2Chunk(const float* src, int64_t lo, int64_t hi, int64_t k) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t a = std::clamp<int64_t>(lo - k, 0, n), b = std::clamp<int64_t>(hi - k, a, n);
  if (a == b) return hn::Zero(d);
  const float* p = src + 2 * (k - lo);
  // Floats [2a, 2b - 1) of p: the first vector holds [0, n), the second [n, 2n).
  const int64_t end = 2 * b - 1;
  const VF first = 2 * a < n ? LoadRange(d, p, 2 * a, std::min(end, n)) : hn::Zero(d);
  const VF second = end > n ? LoadRange(d, p + n, std::max<int64_t>(2 * a - n, 0), end - n)
                            : hn::Zero(d);
  return hn::ConcatEven(d, second, first);
}
#endif

// Stores chunk(k) at out + k for every vector chunk of a len-float row.
// The last chunk is a whole vector too where possible: one that overlaps
// the chunk before it (same floats, same values), or, when the row is
// shorter than a vector and spill is true, one that runs past the row into
// floats the caller rewrites later. Only a short row without spill takes a
// masked store: on Zen 4, perf put most of PadImageStridedT's time (37% of
// ResNet's 16-to-32 stride-2 filter gradient; 20% after) at the masked
// store of each row's last vector.
template <class Chunk>
HWY_INLINE void StoreRow(int64_t len, bool spill, float* out, const Chunk& chunk) {
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t k = 0;
  for (; k + n <= len; k += n) hn::StoreU(chunk(k), d, out + k);
  if (k == len) return;
  if (len >= n) {
    hn::StoreU(chunk(len - n), d, out + len - n);
  } else if (spill) {
    hn::StoreU(chunk(k), d, out + k);
  } else {
    StorePrefix(d, chunk(k), len - k, out + k);
  }
}

// out[k] for k < len: src[(k - lo) * stride] inside [lo, hi), zeros outside;
// src is read only at those floats and between them. Stride 2 is vector
// chunks of even lanes (Stride2Chunk, stored by StoreRow); other strides go
// element by element.
HWY_INLINE void CopyRunStrided(const float* src, int64_t lo, int64_t hi, int64_t len, int stride,
                               bool spill, float* out) {
#if HWY_TARGET != HWY_SCALAR
  if (stride == 2) {
    return StoreRow(len, spill, out, [&](int64_t k) { return Stride2Chunk(src, lo, hi, k); });
  }
#endif
  std::fill(out, out + lo, 0.0f);
  for (int64_t k = lo; k < hi; ++k) out[k] = src[(k - lo) * stride];
  std::fill(out + hi, out + len, 0.0f);
}

// out[k] = 0 for k < len (spill as in StoreRow).
HWY_INLINE void ZeroRun(int64_t len, bool spill, float* out) {
  StoreRow(len, spill, out, [](int64_t) { return hn::Zero(DF()); });
}

}  // namespace

// PadImage for strides of 2 or more (implicit_internal.h): every padded row
// of a phase is one vector run with masked borders; stride 2 takes the even
// lanes of masked loads (ResNet's 16-channel stride-2 image 1.06 -> 0.97 ms
// per batch of 128 on Zen 4, the 32-channel one 1.02 -> 0.69, against the
// scalar gather).
void PadImageStridedT(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad,
                      int64_t plane_stride) {
  const int st = s.stride;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  if (plane_stride == 0) plane_stride = l.ph * l.pw;
  for (int64_t pb = 0; pb < l.phase_cols; ++pb) {
    // Columns j in [lo, hi) read source column j*s + first; the rest are 0.
    const int64_t first = pb - s.pad_left;
    const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : (-first + st - 1) / st, 0, l.pw);
    const int64_t hi =
        std::clamp<int64_t>(first > s.w - 1 ? 0 : (s.w - 1 - first) / st + 1, lo, l.pw);
    for (int64_t pa = 0; pa < l.phase_rows; ++pa) {
      for (int64_t c = 0; c < s.channels; ++c) {
        const float* src = s.data + (n * s.channels + c) * s.h * s.w;
        float* dst = pad + ((pa * l.phase_cols + pb) * s.channels + c) * plane_stride;
        for (int64_t i = 0; i < l.ph; ++i, dst += l.pw) {
          const int64_t u = i * st + pa - s.pad_top;
          // A whole vector from this row's start stays within the plane's
          // rows still to be written (in order, so they overwrite it).
          const bool spill = (l.ph - i) * l.pw >= lanes;
          if (u < 0 || u >= s.h || lo == hi) {
            ZeroRun(l.pw, spill, dst);
          } else {
            CopyRunStrided(src + u * s.w + first + lo * st, lo, hi, l.pw, st, spill, dst);
          }
        }
      }
    }
  }
}

namespace {

// TapRowsT for an interior plan: every run a plain copy of its len floats
// (one 4-float vector for VGG's 4x4 rows).
void InteriorTapRows(const TapGather& g, int64_t t0, int64_t t1, float* dst, int64_t ld) {
  const TapSource& s = g.source();
  const int64_t khw = int64_t{s.kh} * s.kw, plane = s.h * s.w;
  const std::vector<TapGather::Run>& runs = g.runs();
  const int64_t* start = g.start();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t c = t / khw, a = t % khw / s.kw, b = t % s.kw;
    const float* src = s.data + c * plane + a * s.w + b;
    float* d = dst + (t - t0) * ld;
    for (size_t r = 0; r < runs.size(); ++r) {
      const float* from = src + start[r];
      float* out = d + runs[r].j;
      const int64_t len = runs[r].len;
#if HWY_TARGET != HWY_SCALAR
      if (len == 4) {
        const hn::CappedTag<float, 4> d4;
        hn::StoreU(hn::LoadU(d4, from), d4, out);
        continue;
      }
#endif
      CopyRun1(from, 0, len, len, out);
    }
  }
}

// TapRowsT for whole images of at most kTinyPlane output and source
// pixels (VGG's 2x2 layers: per image and tap two runs of two floats, whose
// bounds cost more than the copy). Each kernel offset (a, b) maps every
// output pixel to its source pixel or to a zero slot; a source plane is
// loaded once and read by all kh x kw of its taps.
constexpr int64_t kTinyPlane = 16;
constexpr int kTinyKernel = 49;  // taps per channel (7 x 7)

bool TinyPlanes(const TapGather& g) {
  const TapSource& s = g.source();
  return g.whole_images() > 0 && s.oh * s.ow <= kTinyPlane && s.h * s.w <= kTinyPlane &&
         s.kh * s.kw <= kTinyKernel;
}

void TinyPlaneTapRows(const TapGather& g, int64_t t0, int64_t t1, float* dst, int64_t ld) {
  const TapSource& s = g.source();
  const int64_t plane = s.oh * s.ow, hw = s.h * s.w, khw = int64_t{s.kh} * s.kw;
  uint8_t from[kTinyKernel][kTinyPlane];  // source pixel, or hw: the zero slot
  for (int64_t k = 0; k < khw; ++k) {
    const int64_t a = k / s.kw, b = k % s.kw;
    for (int64_t j = 0; j < plane; ++j) {
      const int64_t u = j / s.ow * s.stride + a - s.pad_top;
      const int64_t v = j % s.ow * s.stride + b - s.pad_left;
      from[k][j] = static_cast<uint8_t>(u >= 0 && u < s.h && v >= 0 && v < s.w ? u * s.w + v : hw);
    }
  }
  float src[kTinyPlane + 1];
  src[hw] = 0.0f;
  const int64_t c0 = t0 / khw, c1 = (t1 + khw - 1) / khw;
  for (int64_t i = 0; i < g.whole_images(); ++i) {
    const int64_t n = g.first_image() + i;
    for (int64_t c = c0; c < c1; ++c) {
      std::copy_n(s.data + (n * s.channels + c) * hw, hw, src);
      const int64_t k0 = std::max(t0 - c * khw, int64_t{0});
      const int64_t k1 = std::min(t1 - c * khw, khw);
      for (int64_t k = k0; k < k1; ++k) {
        float* out = dst + (c * khw + k - t0) * ld + i * plane;
        for (int64_t j = 0; j < plane; ++j) out[j] = src[from[k][j]];
      }
    }
  }
}

}  // namespace

void TapRowsT(const TapGather& g, int64_t t0, int64_t t1, float* dst, int64_t ld) {
  if (TinyPlanes(g)) return TinyPlaneTapRows(g, t0, t1, dst, ld);
  if (g.interior()) return InteriorTapRows(g, t0, t1, dst, ld);
  const TapSource& s = g.source();
  const int64_t khw = int64_t{s.kh} * s.kw, plane = s.h * s.w;
  const int kh = s.kh, kw = s.kw;
  int64_t c = t0 / khw;
  int a = static_cast<int>(t0 % khw / kw), b = static_cast<int>(t0 % kw);
  const std::vector<TapGather::Run>& runs = g.runs();
  for (int64_t t = t0; t < t1; ++t) {
    float* d = dst + (t - t0) * ld;
    for (size_t r = 0; r < runs.size(); ++r) {
      const TapGather::Run& run = runs[r];
      const int64_t row = g.row()[r * kh + a];
      float* out = d + run.j;
      if (row < 0) {  // a padding row
        std::fill(out, out + run.len, 0.0f);
        continue;
      }
      const int64_t lo = g.lo()[r * kw + b], hi = g.hi()[r * kw + b];
      const float* src = s.data + (run.n * s.channels + c) * plane + row + g.col()[r * kw + b];
      if (s.stride == 1) {
        CopyRun1(src - lo, lo, hi, run.len, out);
      } else {
        CopyRunStrided(src, lo, hi, run.len, s.stride, /*spill=*/false, out);
      }
    }
    if (++b == kw) {
      b = 0;
      if (++a == kh) a = 0, ++c;
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

HWY_EXPORT(TapRowsT);
HWY_EXPORT(PadImageStridedT);

void PadImageStrided(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad,
                     int64_t plane_stride) {
  HWY_DYNAMIC_DISPATCH(PadImageStridedT)(s, l, n, pad, plane_stride);
}

void TapGather::Reset(const TapSource& s, int64_t begin, int64_t end) {
  s_ = s;
  runs_.clear();
  const int64_t plane = s.oh * s.ow;
  for (int64_t i = begin; i < end;) {
    const int64_t n = i / plane, rem = i % plane;
    const int64_t p = rem / s.ow, q = rem % s.ow;
    const int64_t len = std::min(s.ow - q, end - i);
    runs_.push_back({i - begin, len, n, p, q});
    i += len;
  }
  const size_t nr = runs_.size();
  row_.resize(nr * s.kh);
  col_.resize(nr * s.kw);
  lo_.resize(nr * s.kw);
  hi_.resize(nr * s.kw);
  for (size_t r = 0; r < nr; ++r) {
    const Run& run = runs_[r];
    for (int a = 0; a < s.kh; ++a) {
      const int64_t u = run.p * s.stride + a - s.pad_top;
      row_[r * s.kh + a] = (u >= 0 && u < s.h) ? u * s.w : -1;
    }
    for (int b = 0; b < s.kw; ++b) {
      // Output k of the run reads column v0 + k*stride; keep those in [0, w).
      const int64_t v0 = run.q0 * s.stride + b - s.pad_left;
      int64_t lo = v0 >= 0 ? 0 : (-v0 + s.stride - 1) / s.stride;
      int64_t hi = v0 >= s.w ? 0 : (s.w - 1 - v0) / s.stride + 1;
      lo = std::min(lo, run.len);
      hi = std::clamp(hi, lo, run.len);
      lo_[r * s.kw + b] = lo;
      hi_[r * s.kw + b] = hi;
      col_[r * s.kw + b] = v0 + lo * s.stride;
    }
  }
  const bool whole = plane > 0 && begin % plane == 0 && end % plane == 0;
  whole_images_ = whole ? (end - begin) / plane : 0;
  first_image_ = whole ? begin / plane : 0;
  interior_ = s.stride == 1;
  for (size_t r = 0; r < nr && interior_; ++r) {
    for (int a = 0; a < s.kh; ++a) interior_ = interior_ && row_[r * s.kh + a] >= 0;
    for (int b = 0; b < s.kw; ++b) {
      interior_ = interior_ && lo_[r * s.kw + b] == 0 && hi_[r * s.kw + b] == runs_[r].len;
    }
  }
  start_.resize(interior_ ? nr : 0);
  for (size_t r = 0; r < start_.size(); ++r) {
    start_[r] = runs_[r].n * s.channels * s.h * s.w + row_[r * s.kh] + col_[r * s.kw];
  }
}

void TapGather::TapRows(int64_t t0, int64_t t1, float* dst, int64_t ld) const {
  HWY_DYNAMIC_DISPATCH(TapRowsT)(*this, t0, t1, dst, ld);
}

void Im2colImage(const TapSource& s, int64_t n, float* cols, int64_t ld) {
  thread_local TapGather gather;
  const int64_t plane = s.oh * s.ow;
  gather.Reset(s, n * plane, (n + 1) * plane);
  gather.TapRows(0, s.channels * s.kh * s.kw, cols, ld);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
