// Internal: the 8 x 8 float transpose in registers, compiled once per SIMD
// target of x86 with 8-float vectors (AVX2, AVX3). Include after
// "hwy/highway.h" and "src/kernels/hwy_ops.h" from a file that includes
// "hwy/foreach_target.h" (Highway's per-target include guard); defines
// XWIRES_HAVE_TRANSPOSE8 on the targets that have it.
#if defined(XWIRES_SRC_KERNELS_TRANSPOSE8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_TRANSPOSE8_INL_H_
#undef XWIRES_SRC_KERNELS_TRANSPOSE8_INL_H_
#else
#define XWIRES_SRC_KERNELS_TRANSPOSE8_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

#undef XWIRES_HAVE_TRANSPOSE8
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define XWIRES_HAVE_TRANSPOSE8 1
#endif

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

#ifdef XWIRES_HAVE_TRANSPOSE8
using D8 = hn::CappedTag<float, 8>;
using V8 = hn::Vec<D8>;

// col[p] = (rows[0][p], ..., rows[7][p]) for p < 8: 8 rows of 8 floats,
// `ld` floats apart. 8 loads and 24 in-lane shuffles.
HWY_INLINE void Transpose8(const float* rows, int64_t ld, V8 (&col)[8]) {
  const D8 d;
  const hn::Repartition<double, D8> dd;
  V8 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = hn::LoadU(d, rows + i * ld);
  for (int i = 0; i < 8; i += 2) {  // per 128-bit block: pairs of rows
    t[i] = hn::InterleaveLower(d, r[i], r[i + 1]);
    t[i + 1] = hn::InterleaveUpper(d, r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {  // then pairs of pairs, as doubles
    for (int h = 0; h < 2; ++h) {
      const auto a = hn::BitCast(dd, t[i + h]), b = hn::BitCast(dd, t[i + h + 2]);
      r[i + 2 * h] = hn::BitCast(d, hn::InterleaveLower(dd, a, b));
      r[i + 2 * h + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, a, b));
    }
  }
  // r[c] (c < 4) holds rows 0-3 of columns c and c + 4, r[4 + c] rows 4-7.
  for (int c = 0; c < 4; ++c) {
    col[c] = hn::ConcatLowerLower(d, r[4 + c], r[c]);
    col[c + 4] = hn::ConcatUpperUpper(d, r[4 + c], r[c]);
  }
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
