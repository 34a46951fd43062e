// Internal: an exactly rounded float fused multiply-add, a * b + c with one
// rounding (IEEE 754 fusedMultiplyAdd, round to nearest even: the bits of
// std::fma), on every SIMD target, compiled once per target. Include it
// after "hwy/highway.h" from a file that includes "hwy/foreach_target.h".
//
// Targets with an FMA instruction (HWY_NATIVE_FMA: AVX2, AVX-512, NEON) use
// it. SSE4, SSSE3, EMU128 and SCALAR have none, and Highway's MulAdd there
// rounds twice, so they emulate it in double precision, as glibc's software
// fmaf does:
//  1. p = a * b in double is exact (24 + 24 significant bits <= 53, and
//     float exponents cannot leave double's normal range);
//  2. s = RN(p + c) in double, with its exact error e = p + c - s from
//     TwoSum (exact: nothing here overflows or underflows in double);
//  3. rounding to odd: if e != 0 and s's last significand bit is 0, s moves
//     one double ulp toward e (integer +-1 on its bits). The result is the
//     exact sum rounded toward zero with the sticky bit in the last place;
//  4. RN(s) to float. Rounding to odd with 53 >= 24 + 2 bits keeps every
//     float rounding boundary (the midpoints between floats, the subnormal
//     grid, the overflow threshold 2^128 - 2^103 all need <= 26 bits) on the
//     same side, so the two roundings give the one rounding of a*b + c.
//     Float subnormal results are fine too: the double s stays normal there
//     (|s| >= 2^-298 when not 0), so its grid is finer than float's.
// The scalar steps (MayRoundTwice, SumRoundedToOdd, FirstNaN, FmaEmulated)
// are fma_emu_scalar.h's, shared with the library's scalar FmaF
// (src/fma_scalar.h); the vector versions below mirror them.
// Zeros: when s == 0 the sum p + c was exact (e == 0), and IEEE addition
// gives the sign of an exact zero sum as fma does. Infinities and NaN: s is
// then inf or NaN and e NaN, which turns the fix-up off; float overflow
// happens in step 4 (RN to float gives inf), as does underflow to zero.
// The exact error and step 3 are needed only where RN(s) could differ from
// the one rounding (MayRoundTwice: s on a float midpoint, or float-
// subnormal), so the usual sum costs a product, an add and a test.
// NaN: a NaN operand gives the first NaN among a, b, c, quieted (payload
// kept), else an invalid product or sum (inf * 0, inf - inf) gives the CPU's
// default NaN. Which NaN an add of two NaNs returns would otherwise depend
// on the operand order the compiler picks. FMA instructions choose among
// NaN operands by their own rules (x86 by operand encoding, ARM preferring
// c and signaling NaNs), so only NaN-ness, not the payload, is the same as
// std::fma's on every CPU (tests/core/fma_emu_test.cc).
#if defined(XWIRES_SRC_KERNELS_FMA_EMU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#undef XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#else
#define XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "src/kernels/fma_emu_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if !HWY_NATIVE_FMA && HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && \
    HWY_TARGET != HWY_EMU128
// MayRoundTwice on double vectors.
template <class DD, class VD = hn::Vec<DD>>
HWY_INLINE hn::Mask<DD> MayRoundTwice(DD dd, VD s) {
  const hn::RebindToUnsigned<DD> du;
  const auto below = hn::And(hn::BitCast(du, s), hn::Set(du, kBelowFloatMask));
  const auto midpoint = hn::RebindMask(dd, hn::Eq(below, hn::Set(du, kFloatMidpoint)));
  const VD m = hn::Abs(s);
  const auto tiny = hn::And(hn::Lt(m, hn::Set(dd, kFloatMinNormal)), hn::Ne(m, hn::Zero(dd)));
  return hn::Or(midpoint, tiny);
}

// SumRoundedToOdd on double vectors.
template <class DD, class VD = hn::Vec<DD>>
HWY_INLINE VD SumRoundedToOdd(DD dd, VD p, VD c, VD s) {
  const hn::RebindToSigned<DD> di;
  const VD sp = hn::Sub(s, c);
  const VD sc = hn::Sub(s, sp);
  const VD e = hn::Add(hn::Sub(p, sp), hn::Sub(c, sc));
  const VD se = hn::Mul(s, e);
  const VD zero = hn::Zero(dd);
  const auto bits = hn::BitCast(di, s);
  const auto one = hn::Set(di, 1);
  const auto even = hn::RebindMask(dd, hn::Eq(hn::And(bits, one), hn::Zero(di)));
  const auto up = hn::RebindMask(di, hn::And(even, hn::Gt(se, zero)));
  const auto down = hn::RebindMask(di, hn::And(even, hn::Lt(se, zero)));
  const auto fixed =
      hn::Sub(hn::Add(bits, hn::IfThenElseZero(up, one)), hn::IfThenElseZero(down, one));
  return hn::BitCast(dd, fixed);
}
#endif

// a * b + c with one rounding, lane by lane: the bits of std::fma on every
// target.
template <class V>
HWY_INLINE V MulAddExact(V a, V b, V c) {
#if HWY_NATIVE_FMA
  return hn::MulAdd(a, b, c);
#elif HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  // Two halves of double lanes (SSE4, SSSE3). Not on EMU128 and SCALAR,
  // whose DemoteTo clamps inf and values beyond FLT_MAX to +-FLT_MAX.
  const hn::DFromV<V> df;
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto p_lo = hn::Mul(hn::PromoteTo(dd, hn::LowerHalf(dh, a)),
                            hn::PromoteTo(dd, hn::LowerHalf(dh, b)));
  const auto p_hi = hn::Mul(hn::PromoteTo(dd, hn::UpperHalf(dh, a)),
                            hn::PromoteTo(dd, hn::UpperHalf(dh, b)));
  const auto c_lo = hn::PromoteTo(dd, hn::LowerHalf(dh, c));
  const auto c_hi = hn::PromoteTo(dd, hn::UpperHalf(dh, c));
  auto lo = hn::Add(p_lo, c_lo);
  auto hi = hn::Add(p_hi, c_hi);
  if (HWY_UNLIKELY(!hn::AllFalse(dd, hn::Or(MayRoundTwice(dd, lo), MayRoundTwice(dd, hi))))) {
    lo = SumRoundedToOdd(dd, p_lo, c_lo, lo);
    hi = SumRoundedToOdd(dd, p_hi, c_hi, hi);
  }
  const V r = hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
  if (HWY_LIKELY(hn::AllFalse(df, hn::IsNaN(r)))) return r;
  const hn::RebindToUnsigned<decltype(df)> du;
  const auto quiet = hn::Set(du, 0x00400000u);
  const auto first = hn::IfThenElse(
      hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::IfThenElse(hn::IsNaN(c), c, r)));
  return hn::IfThenElse(hn::IsNaN(r), hn::BitCast(df, hn::Or(hn::BitCast(du, first), quiet)), r);
#else
  // EMU128, SCALAR (and any target without double vectors): per lane.
  const hn::DFromV<V> df;
  HWY_ALIGN float x[hn::MaxLanes(df)], y[hn::MaxLanes(df)], z[hn::MaxLanes(df)];
  hn::Store(a, df, x);
  hn::Store(b, df, y);
  hn::Store(c, df, z);
  for (size_t i = 0; i < hn::Lanes(df); ++i) z[i] = FmaEmulated(x[i], y[i], z[i]);
  return hn::Load(df, z);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
