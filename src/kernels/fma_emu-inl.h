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
// Zeros: when s == 0 the sum p + c was exact (e == 0), and IEEE addition
// gives the sign of an exact zero sum as fma does. Infinities and NaN: s is
// then inf or NaN and e NaN, which turns the fix-up off; float overflow
// happens in step 4 (RN to float gives inf), as does underflow to zero.
// NaN operands give a quiet NaN; its payload is the first NaN among a, b, c
// (quieted), as x86's FMA instructions and glibc's fmaf give.
#if defined(XWIRES_SRC_KERNELS_FMA_EMU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#undef XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#else
#define XWIRES_SRC_KERNELS_FMA_EMU_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One lane of the emulation (steps 1-4 above) in scalar double arithmetic;
// the build never contracts (-ffp-contract=off), so each operation rounds.
HWY_INLINE float FmaEmulated(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double dc = static_cast<double>(c);
  const double s = p + dc;
  const double sp = s - dc;  // TwoSum (Knuth): e = (p - sp) + (dc - sc)
  const double sc = s - sp;
  const double e = (p - sp) + (dc - sc);
  const double se = s * e;  // > 0: e has s's sign, < 0: the other; NaN: skip
  uint64_t bits;
  std::memcpy(&bits, &s, sizeof(bits));
  if ((bits & 1) == 0) {
    if (se > 0.0) {
      bits += 1;  // away from zero
    } else if (se < 0.0) {
      bits -= 1;  // toward zero
    }
  }
  double odd;
  std::memcpy(&odd, &bits, sizeof(odd));
  return static_cast<float>(odd);
}

#if !HWY_NATIVE_FMA && HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && \
    HWY_TARGET != HWY_EMU128
// Steps 1-3 on double vectors: s rounded to odd.
template <class DD, class VD = hn::Vec<DD>>
HWY_INLINE VD SumRoundedToOdd(DD dd, VD a, VD b, VD c) {
  const hn::RebindToSigned<DD> di;
  const VD p = hn::Mul(a, b);
  const VD s = hn::Add(p, c);
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
  const auto lo = SumRoundedToOdd(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, a)),
                                  hn::PromoteTo(dd, hn::LowerHalf(dh, b)),
                                  hn::PromoteTo(dd, hn::LowerHalf(dh, c)));
  const auto hi = SumRoundedToOdd(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, a)),
                                  hn::PromoteTo(dd, hn::UpperHalf(dh, b)),
                                  hn::PromoteTo(dd, hn::UpperHalf(dh, c)));
  return hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
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
