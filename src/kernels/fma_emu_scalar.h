// Internal: the scalar core of the exact float fused multiply-add emulation
// (fma_emu-inl.h explains the method: double product and sum, rounding to
// odd where the two roundings could differ, then one rounding to float).
// Plain inline code for the build's own ISA, shared by the dispatched
// kernels' per-lane paths (EMU128, SCALAR; MulAddExact) and the library's
// scalar FmaF (src/fma_scalar.h), so both give the same bits: std::fma's.
// The build never contracts (-ffp-contract=off), so each operation rounds.
#ifndef XWIRES_SRC_KERNELS_FMA_EMU_SCALAR_H_
#define XWIRES_SRC_KERNELS_FMA_EMU_SCALAR_H_

#include <cstdint>
#include <cstring>

#if defined(__GNUC__) || defined(__clang__)
#define XW_FMA_EMU_INLINE inline __attribute__((always_inline))
#define XW_FMA_EMU_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define XW_FMA_EMU_INLINE inline
#define XW_FMA_EMU_UNLIKELY(x) (x)
#endif

namespace xw {
namespace kernels {

// Whether RN(s) to float could differ from the one rounding of the exact
// sum x that s = RN_double(x) rounds: only where s lies on a boundary of
// float rounding while x does not (no boundary can lie strictly between x
// and s, as it is a double nearer to x than s). The boundaries are the
// midpoints between floats: in float's normal range (and the overflow
// threshold) the doubles whose significand ends in 1 followed by 28 zeros
// (below float's last bit), below 2^-126 the subnormal grid's, taken here as
// every nonzero |s| < 2^-126. Elsewhere RN(s) is already the answer (the
// common case), so the exact error and rounding to odd are only computed
// for these rare sums.
constexpr uint64_t kBelowFloatMask = (uint64_t{1} << 29) - 1;
constexpr uint64_t kFloatMidpoint = uint64_t{1} << 28;
constexpr double kFloatMinNormal = 0x1p-126;

XW_FMA_EMU_INLINE bool MayRoundTwice(double s) {
  uint64_t bits;
  std::memcpy(&bits, &s, sizeof(bits));
  const double m = s < 0.0 ? -s : s;
  return (bits & kBelowFloatMask) == kFloatMidpoint || (m < kFloatMinNormal && m != 0.0);
}

// Step 3 on one double: s = RN(p + c) rounded to odd instead, from the
// exact error of TwoSum (Knuth).
XW_FMA_EMU_INLINE double SumRoundedToOdd(double p, double c, double s) {
  const double sp = s - c;
  const double sc = s - sp;
  const double e = (p - sp) + (c - sc);
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
  return odd;
}

// The first NaN among a, b, c, quieted; else r (the default NaN).
XW_FMA_EMU_INLINE float FirstNaN(float a, float b, float c, float r) {
  const float first = a != a ? a : b != b ? b : c != c ? c : r;
  uint32_t u;
  std::memcpy(&u, &first, sizeof(u));
  u |= 0x00400000u;  // quiet
  float q;
  std::memcpy(&q, &u, sizeof(q));
  return q;
}

// a * b + c with one rounding, in scalar double arithmetic (steps 1-4 of
// fma_emu-inl.h): std::fma's bits, and its NaN rule (the first NaN operand,
// quieted) on every CPU.
XW_FMA_EMU_INLINE float FmaEmulated(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double dc = static_cast<double>(c);
  double s = p + dc;
  if (XW_FMA_EMU_UNLIKELY(MayRoundTwice(s))) s = SumRoundedToOdd(p, dc, s);
  const float r = static_cast<float>(s);
  return XW_FMA_EMU_UNLIKELY(r != r) ? FirstNaN(a, b, c, r) : r;
}

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_FMA_EMU_SCALAR_H_
