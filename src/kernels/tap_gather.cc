// Tap gathering shared by the direct and im2col convolutions (conv_internal.h).
#include <algorithm>

#include "src/kernels/conv_internal.h"
#include "src/kernels/simd.h"

namespace xw {
namespace kernels {

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
  chunks_ = 0;
#if defined(__AVX512F__)
  if (s.stride != 1) return;
  for (const Run& run : runs_) chunks_ = std::max(chunks_, (run.len + 15) / 16);
  load_mask_.assign(nr * s.kw * chunks_, 0);
  keep_mask_.assign(nr * chunks_, 0);
  auto bits = [](int64_t from, int64_t to) {  // lanes [from, to) of 16, clamped
    from = std::clamp<int64_t>(from, 0, 16), to = std::clamp<int64_t>(to, 0, 16);
    return from >= to ? uint16_t{0}
                      : static_cast<uint16_t>(((uint32_t{1} << to) - 1) & ~((uint32_t{1} << from) - 1));
  };
  for (size_t r = 0; r < nr; ++r) {
    for (int64_t k = 0; k < chunks_; ++k) {
      keep_mask_[r * chunks_ + k] = bits(0, runs_[r].len - 16 * k);
      for (int b = 0; b < s.kw; ++b) {
        load_mask_[(r * s.kw + b) * chunks_ + k] =
            bits(lo_[r * s.kw + b] - 16 * k, hi_[r * s.kw + b] - 16 * k);
      }
    }
  }
  zero_mask_.assign(chunks_, 0);
#endif
}

namespace {

// d[k] for k < len: zeros outside [lo, hi), src[(k - lo) * stride] inside.
// The common interior case (stride 1, no padding, a full 16-multiple) is
// plain vector copies.
inline void CopyRun(const float* src, int64_t lo, int64_t hi, int64_t len, int stride,
                    float* d) {
  if (stride == 1 && lo == 0 && hi == len && (len & 15) == 0) {
    for (int64_t k = 0; k < len; k += 16) StoreV(d + k, LoadV(src + k));
    return;
  }
  for (int64_t k = 0; k < lo; ++k) d[k] = 0.0f;
  if (stride == 1) {
    for (int64_t k = lo; k < hi; ++k) d[k] = src[k - lo];
  } else {
    for (int64_t k = lo; k < hi; ++k) d[k] = src[(k - lo) * stride];
  }
  for (int64_t k = hi; k < len; ++k) d[k] = 0.0f;
}

#if defined(__AVX512F__)
// The same run with Reset's masks: chunk k loads lanes lm[k] from
// base + 16k (masked-off lanes read nothing, so padding costs no branch)
// and stores lanes km[k].
inline void MaskedRun(const float* base, const uint16_t* lm, const uint16_t* km, int64_t chunks,
                      float* d) {
  for (int64_t k = 0; k < chunks; ++k) {
    const __m512 v = _mm512_maskz_loadu_ps(lm[k], base + 16 * k);
    if (km[k] == 0xFFFF) {
      _mm512_storeu_ps(d + 16 * k, v);
    } else {
      _mm512_mask_storeu_ps(d + 16 * k, km[k], v);
    }
  }
}
#endif

}  // namespace

void TapGather::TapRows(int64_t t0, int64_t t1, float* dst, int64_t ld) const {
  const int64_t khw = int64_t{s_.kh} * s_.kw, plane = s_.h * s_.w;
  const int kh = s_.kh, kw = s_.kw, stride = s_.stride;
  int64_t c = t0 / khw;
  int a = static_cast<int>(t0 % khw / kw), b = static_cast<int>(t0 % kw);
  for (int64_t t = t0; t < t1; ++t) {
    float* d = dst + (t - t0) * ld;
    for (size_t r = 0; r < runs_.size(); ++r) {
      const Run& run = runs_[r];
      const int64_t row = row_[r * kh + a];
      const int64_t lo = row < 0 ? run.len : lo_[r * kw + b];
      const int64_t hi = row < 0 ? run.len : hi_[r * kw + b];
      const float* src = s_.data + (run.n * s_.channels + c) * plane + row + col_[r * kw + b];
#if defined(__AVX512F__)
      if (chunks_ > 0) {  // stride 1; a padding row loads nothing (mask 0)
        const uint16_t* lm = row < 0 ? zero_mask_.data() : load_mask_.data() + (r * kw + b) * chunks_;
        MaskedRun(src - lo, lm, keep_mask_.data() + r * chunks_, chunks_, d + run.j);
        continue;
      }
#endif
      CopyRun(src, lo, hi, run.len, stride, d + run.j);
    }
    if (++b == kw) {
      b = 0;
      if (++a == kh) a = 0, ++c;
    }
  }
}

void Im2colImage(const TapSource& s, int64_t n, float* cols, int64_t ld) {
  thread_local TapGather gather;
  const int64_t plane = s.oh * s.ow;
  gather.Reset(s, n * plane, (n + 1) * plane);
  gather.TapRows(0, s.channels * s.kh * s.kw, cols, ld);
}

}  // namespace kernels
}  // namespace xw
