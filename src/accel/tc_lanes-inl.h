// Per-target lane helpers of the tensor-core float panels (accel_tiles.cc,
// tc_block_tiles.cc): truncation to int32, max(m, |p|) and int32-to-float
// toward zero, each through the single instruction a target has for it and
// the same value on every target. Included once per Highway target, after
// hwy/highway.h, by files that use foreach_target.

// Per-target include guard (Highway's -inl.h convention).
#if defined(XWIRES_SRC_ACCEL_TC_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#undef XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#else
#define XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace tc_lanes {
namespace hn = hwy::HWY_NAMESPACE;

// Float to int32 toward zero for values known to lie inside int32 (the
// block's scaled terms): the bare conversion instruction where the target
// has one, without ConvertTo's saturation fix-up (same value in range).
template <class DI, class V>
HWY_INLINE hn::Vec<DI> TruncToInt(DI di, V v) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3_ZEN4
  if constexpr (sizeof(v.raw) == 64) return hn::Vec<DI>{_mm512_cvttps_epi32(v.raw)};
#endif
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET <= HWY_AVX3
  if constexpr (sizeof(v.raw) == 32) return hn::Vec<DI>{_mm256_cvttps_epi32(v.raw)};
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  if constexpr (sizeof(v.raw) == 16) return hn::Vec<DI>{_mm_cvttps_epi32(v.raw)};
#endif
  return hn::ConvertTo(di, v);
}

// max(m, |p|) for m >= 0 and finite p (the panels' operands admit no NaN):
// AVX-512DQ's VRANGEPS does it in one instruction (larger magnitude, sign
// cleared); elsewhere Abs then Max. The same value on every target.
template <class V>
HWY_INLINE V MaxAbs(V m, V p) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3_ZEN4
  if constexpr (sizeof(p.raw) == 64) return V{_mm512_range_ps(m.raw, p.raw, 0x0B)};
  if constexpr (sizeof(p.raw) == 32) return V{_mm256_range_ps(m.raw, p.raw, 0x0B)};
  if constexpr (sizeof(p.raw) == 16) return V{_mm_range_ps(m.raw, p.raw, 0x0B)};
#endif
  return hn::Max(m, hn::Abs(p));
}

// int32 lanes |s| < 2^31 - 2^7 to float, rounded toward zero: AVX-512's
// conversion with embedded rounding; elsewhere the nearest conversion, one
// step toward zero where it overshot (exact in int32: the float is an
// integer below 2^31). The same value on every target.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> ConvertRz(DF df, VI s) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3_ZEN4
  if constexpr (sizeof(s.raw) == 64) {
    return hn::Vec<DF>{_mm512_cvt_roundepi32_ps(s.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
  }
#endif
  const hn::RebindToSigned<DF> di;
  const auto f = hn::ConvertTo(df, s);
  // over: -1 where |f| > |s|; the float one step toward zero has bits - 1.
  const auto over = hn::VecFromMask(di, hn::Gt(hn::Abs(TruncToInt(di, f)), hn::Abs(s)));
  return hn::BitCast(df, hn::Add(hn::BitCast(di, f), over));
}

}  // namespace tc_lanes
}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
