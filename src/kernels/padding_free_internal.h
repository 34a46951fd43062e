// Internal: the pieces the padding-free convolutions share
// (conv_padding_free.cc, conv_padding_free_filter.cc).
#ifndef XWIRES_SRC_KERNELS_PADDING_FREE_INTERNAL_H_
#define XWIRES_SRC_KERNELS_PADDING_FREE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <utility>

#include "src/kernels/ordered_gemm.h"
#include "src/scratch_floats.h"
#include "xwires/core/reduce.h"

namespace xw {
namespace kernels {
namespace padfree {

// In-range taps [lo, hi) of output index i along one axis: input index
// i * stride + k - pad must lie in [0, size).
struct AxisRange {
  int lo, hi;
  bool operator==(const AxisRange& o) const { return lo == o.lo && hi == o.hi; }
};

inline AxisRange InRange(int64_t i, int64_t stride, int k, int pad, int64_t size) {
  const int64_t first = i * stride - pad;  // input index of tap 0
  const int64_t lo = std::clamp<int64_t>(-first, 0, k);
  const int64_t hi = std::clamp<int64_t>(size - first, lo, k);
  return AxisRange{static_cast<int>(lo), static_cast<int>(hi)};
}

// dst[0, n) = src[0, n), for the short runs here (a panel row, a few pixels):
// a fixed-size loop the compiler keeps inline, where a memmove call per few
// floats cost a fifth of a filter gradient's time.
inline void CopyShort(const float* src, int64_t n, float* dst) {
  if (n == kPanel) {
    for (int j = 0; j < kPanel; ++j) dst[j] = src[j];
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j];
}

// A panel of B: dst[(u - t0) * kPanel + j] = rows[row[u] * ld + j0 + j],
// zeros past `cols` columns and where row[u] < 0.
void PackRows(const float* rows, int64_t ld, int64_t cols, int64_t j0, int64_t t0, int64_t t1,
              const int64_t* row, float* dst);

// out [rows x cols] (row stride ld_out) = A [rows x terms] (row stride lda)
// times B, whose term u is row b_row[u] of `b` (cols floats; zeros where
// b_row[u] < 0), each output reduced per spec: one ordered GEMM.
void Product(int64_t rows, int64_t cols, int64_t terms, const float* a, int64_t lda, const float* b,
             const int64_t* b_row, const ReduceSpec& spec, float* out, int64_t ld_out);

// Images [n0, n0 + images) of an NCHW tensor [*, ch, plane] as [image][pixel][ch].
ScratchFloats ChannelsLast(const float* nchw, int64_t n0, int64_t images, int64_t ch,
                           int64_t plane);

// Output rows (or columns) [lo, hi) where tap a of an axis reads the source.
std::pair<int64_t, int64_t> PixelsReading(int a, int64_t out, int64_t stride, int k, int pad,
                                          int64_t size);

}  // namespace padfree
}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_PADDING_FREE_INTERNAL_H_
