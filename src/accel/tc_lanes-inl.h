// Per-target lane helpers of the tensor-core float panels (accel_tiles.cc,
// tc_block_tiles.cc): truncation to int32, max(m, |p|) and int32-to-float
// toward zero, each through the single instruction a target has for it
// (the last, on x86 below AVX-512, under RoundTowardZeroMode's MXCSR) and
// the same value on every target. Included once per Highway target, after
// hwy/highway.h, by files that use foreach_target.

// Per-target include guard (Highway's -inl.h convention).
#if defined(XWIRES_SRC_ACCEL_TC_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#undef XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#else
#define XWIRES_SRC_ACCEL_TC_LANES_INL_H_
#endif

#include <cstdint>

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

// Whether this target rounds the block sums toward zero through MXCSR's
// rounding control (x86 below AVX-512, whose int32-to-float conversion has
// no embedded rounding): RoundTowardZeroMode sets it, and ConvertRz is then
// the bare conversion instruction instead of a six-operation fix-up.
#if HWY_ARCH_X86 && defined(__GNUC__) && \
    (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3)
inline constexpr bool kRzByMode = true;

// MXCSR's rounding control at round toward zero (RC = 11) from construction
// to destruction, then the caller's MXCSR again (every other bit kept; the
// exception flags raised in between stay raised).
// Hold one around a kernel whose float operations are all exact (same
// result in any rounding mode) except ConvertRz's. The compiler does not
// know that float operations read MXCSR, so the switches are `asm
// volatile` with a memory clobber: the kernel must load its inputs after
// construction and store its results before destruction (a value computed
// from loads after the first switch cannot be moved above it, nor a value
// stored before the second below it). Not thread-safe to share: MXCSR is
// per thread, like the object.
class RoundTowardZeroMode {
 public:
  RoundTowardZeroMode() {
    asm volatile("stmxcsr %0" : "=m"(saved_) : : "memory");
    const uint32_t rz = saved_ | 0x6000u;
    asm volatile("ldmxcsr %0" : : "m"(rz) : "memory");
  }
  ~RoundTowardZeroMode() {
    uint32_t now;
    asm volatile("stmxcsr %0" : "=m"(now) : : "memory");
    const uint32_t back = saved_ | (now & 0x3fu);  // the exception flags raised meanwhile
    asm volatile("ldmxcsr %0" : : "m"(back) : "memory");
  }
  RoundTowardZeroMode(const RoundTowardZeroMode&) = delete;
  RoundTowardZeroMode& operator=(const RoundTowardZeroMode&) = delete;

 private:
  uint32_t saved_;
};
#else
inline constexpr bool kRzByMode = false;

// Nothing to set: ConvertRz rounds toward zero by itself on this target.
class RoundTowardZeroMode {
 public:
  RoundTowardZeroMode() = default;
  RoundTowardZeroMode(const RoundTowardZeroMode&) = delete;
  RoundTowardZeroMode& operator=(const RoundTowardZeroMode&) = delete;
};
#endif

// int32 lanes |s| < 2^31 - 2^7 to float, rounded toward zero, while `mode`
// is held: AVX-512's conversion with embedded rounding; x86 below it the
// bare conversion under `mode`'s MXCSR; elsewhere the nearest conversion,
// one step toward zero where it overshot (exact in int32: the float is an
// integer below 2^31). The same value on every target.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> ConvertRz(const RoundTowardZeroMode& /*mode*/, DF df, VI s) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3_ZEN4
  if constexpr (sizeof(s.raw) == 64) {
    return hn::Vec<DF>{_mm512_cvt_roundepi32_ps(s.raw, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
  }
#endif
  if constexpr (kRzByMode) return hn::ConvertTo(df, s);
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
