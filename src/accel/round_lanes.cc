// RoundLanes and RoundRows (round_lanes.h) on every SIMD target: the
// per-vector recipes of round_bits-inl.h, the short one for vectors with no
// NaN or Inf lane; no step depends on the lane width.
#include <cstdint>

#include "src/accel/round_lanes.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/accel/round_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "src/accel/round_bits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;

}  // namespace

void RoundLanesT(const float* src, float* dst, int64_t n, OperandRounding mode, bool flush) {
  const bool rounded = WithRounding(mode, flush, [&](auto tag) {
    using T = decltype(tag);
    RoundSpan<T::kMode, T::kFlush>(src, dst, n);
  });
  if (!rounded && dst != src) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

void RoundRowsT(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
                int64_t dst_ld, OperandRounding mode, bool flush) {
  const bool rounded = WithRounding(mode, flush, [&](auto tag) {
    using T = decltype(tag);
    const DF df;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
    if (cols % lanes != 0) {
      for (int64_t r = 0; r < rows; ++r) {
        RoundSpan<T::kMode, T::kFlush>(src + r * src_ld, dst + r * dst_ld, cols);
      }
      return;
    }
    // Whole vectors (a GEMM panel's 32 columns): one inlined loop, with
    // the rows kPrefetchRows ahead prefetched. Rows far apart (a weight
    // matrix's columns block: 12 KiB apart in mlp's data gradient) miss
    // the caches, and the rounding's instructions would otherwise keep far
    // fewer of those loads in flight than a plain copy: there (32 x 3072 x
    // 512, Intel Xeon, AVX-512) a call per row took 1.6x the unrounded
    // product's CPU time, this loop 0.9x.
    constexpr int64_t kPrefetchRows = 16;
    for (int64_t r = 0; r < rows; ++r) {
      const float* s = src + r * src_ld;
      float* d = dst + r * dst_ld;
      if (r + kPrefetchRows < rows) {
        const float* ahead = s + kPrefetchRows * src_ld;
        for (int64_t c = 0; c < cols; c += 16) hwy::Prefetch(ahead + c);
      }
      for (int64_t c = 0; c < cols; c += lanes) {
        hn::StoreU(RoundFloats<T::kMode, T::kFlush>(df, hn::LoadU(df, s + c)), df, d + c);
      }
    }
  });
  if (rounded) return;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[r * dst_ld + c] = src[r * src_ld + c];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace accel {

HWY_EXPORT(RoundLanesT);
HWY_EXPORT(RoundRowsT);

void RoundLanes(const float* src, float* dst, int64_t n, OperandRounding mode,
                bool flush_bf16_subnormals) {
  HWY_DYNAMIC_DISPATCH(RoundLanesT)(src, dst, n, mode, flush_bf16_subnormals);
}

void RoundRows(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
               int64_t dst_ld, OperandRounding mode, bool flush_bf16_subnormals) {
  HWY_DYNAMIC_DISPATCH(RoundRowsT)(src, src_ld, rows, cols, dst, dst_ld, mode,
                                   flush_bf16_subnormals);
}

}  // namespace accel
}  // namespace xw
#endif  // HWY_ONCE
