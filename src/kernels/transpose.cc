// The panel transposes (conv_internal.h): rows of taps, weights or
// gradients into the ordered GEMM's and the tiles' column panels, written
// once on Highway and compiled for every SIMD target (chosen at run time).
// Data movement only, so every target writes the same floats; the rounding
// variant rounds each vector in registers before it stores it (the
// recipes of round_bits-inl.h, the same bits on every target).
#include <algorithm>
#include <cstdint>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/transpose.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/hwy_copy.h"
#include "src/kernels/transpose8-inl.h"
#include "src/accel/round_bits-inl.h"
#include "xwires/core/parallel.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

#ifdef XWIRES_HAVE_TRANSPOSE8
// TransposeToPanel for columns [0, width8) (width8 and panel multiples of
// 8) in 8 x 8 blocks, each transposed in registers; every column vector is
// stored as op(d, vector) (the rounding variant rounds it there).
struct StoreAsIs {
  HWY_INLINE V8 operator()(D8, V8 v) const { return v; }
};
template <class Op = StoreAsIs>
void Transpose8x8Blocks(const float* rows, int64_t ld, int64_t width8, int64_t panel,
                        float* dst, Op op = Op()) {
  const D8 d;
  for (int64_t j0 = 0; j0 < panel; j0 += 8, rows += 8 * ld, dst += 8) {
    for (int64_t q0 = 0; q0 < width8; q0 += 8) {
      V8 col[8];
      Transpose8(rows + q0, ld, col);
      for (int c = 0; c < 8; ++c) hn::StoreU(op(d, col[c]), d, dst + (q0 + c) * panel);
    }
  }
}
#endif

// Four tap rows at a time: one vector of each, interleaved into columns of
// four (StoreInterleaved4), each column's four floats copied to its panel row.
// Panels of a multiple of 8 rows on targets with 8-float vectors go through
// 8 x 8 blocks.
void TransposeToPanelT(const float* rows, int64_t ld, int64_t width, int64_t panel,
                       float* dst) {
  const DF d;
#ifdef XWIRES_HAVE_TRANSPOSE8
  if (panel % 8 == 0 && width >= 8) {
    const int64_t width8 = width / 8 * 8;
    Transpose8x8Blocks(rows, ld, width8, panel, dst);
    if (width8 == width) return;
    rows += width8;
    dst += width8 * panel;
    width -= width8;
  }
#endif
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  if (n < 4 || panel % 4 != 0) {
    for (int64_t q = 0; q < width; ++q) {
      for (int64_t j = 0; j < panel; ++j) dst[q * panel + j] = rows[j * ld + q];
    }
    return;
  }
  HWY_ALIGN float buf[4 * HWY_LANES(float)];
  for (int64_t q0 = 0; q0 < width; q0 += n) {
    const int64_t m = std::min(n, width - q0);
    for (int64_t j = 0; j < panel; j += 4) {
      const float* r = rows + j * ld + q0;
      VF v[4];
      for (int i = 0; i < 4; ++i) {
        v[i] = m == n ? hn::LoadU(d, r + i * ld) : LoadRange(d, r + i * ld, 0, m);
      }
      hn::StoreInterleaved4(v[0], v[1], v[2], v[3], d, buf);
      for (int64_t q = 0; q < m; ++q) {
        std::memcpy(dst + (q0 + q) * panel + j, buf + 4 * q, 4 * sizeof(float));
      }
    }
  }
}

// TransposeToPanelT with every float rounded per kMode: in the 8 x 8
// blocks' registers where the target has them, else over the panel's
// rows right after they are written (still in L1).
template <OperandRounding kMode, bool kFlush>
void TransposeRounded(const float* rows, int64_t ld, int64_t width, int64_t panel,
                      float* dst) {
#ifdef XWIRES_HAVE_TRANSPOSE8
  if (panel % 8 == 0 && width >= 8) {
    const int64_t width8 = width / 8 * 8;
    Transpose8x8Blocks(rows, ld, width8, panel, dst, [](D8 d, V8 v) {
      return accel::HWY_NAMESPACE::RoundFloats<kMode, kFlush>(d, v);
    });
    if (width8 == width) return;
    rows += width8;
    dst += width8 * panel;
    width -= width8;
  }
#endif
  TransposeToPanelT(rows, ld, width, panel, dst);
  accel::HWY_NAMESPACE::RoundSpan<kMode, kFlush>(dst, dst, width * panel);
}

void TransposeToPanelRoundedT(const float* rows, int64_t ld, int64_t width, int64_t panel,
                              float* dst, OperandRounding mode, bool flush) {
  const bool rounded = accel::HWY_NAMESPACE::WithRounding(mode, flush, [&](auto tag) {
    using T = decltype(tag);
    TransposeRounded<T::kMode, T::kFlush>(rows, ld, width, panel, dst);
  });
  if (!rounded) TransposeToPanelT(rows, ld, width, panel, dst);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(TransposeToPanelT);

void TransposeToPanel(const float* rows, int64_t ld, int64_t width, int64_t panel, float* dst) {
  HWY_DYNAMIC_DISPATCH(TransposeToPanelT)(rows, ld, width, panel, dst);
}

HWY_EXPORT(TransposeToPanelRoundedT);

void TransposeToPanelRounded(const float* rows, int64_t ld, int64_t width, int64_t panel,
                             float* dst, OperandRounding mode, bool flush_bf16_subnormals) {
  HWY_DYNAMIC_DISPATCH(TransposeToPanelRoundedT)(rows, ld, width, panel, dst, mode,
                                                 flush_bf16_subnormals);
}

void TransposeMatrix(const float* src, int64_t rows, int64_t cols, float* dst) {
  constexpr int64_t kB = 16;
  ParallelFor((cols + kB - 1) / kB, 1, [&](int64_t b0, int64_t b1) {
    const int64_t c0 = b0 * kB, c1 = std::min(cols, b1 * kB);
    TransposeToPanel(src + c0, cols, c1 - c0, rows, dst + c0 * rows);
  });
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
