// Internal: RoundOperand (accel_numerics.h) on one vector of floats, for
// any Highway descriptor, so that the kernels that pack operands (the
// panel transposes, round_lanes.cc) round in registers while they copy.
// The bit recipes on uint32 lanes (integer adds, masks and selects), and
// binary16 by the exact float sum (|x| + 2^(k+23)) - 2^(k+23), which
// rounds |x| to nearest even at the binary16 spacing 2^k of its binade
// (k = max(e - 10, -24)); no step depends on the lane width. Include after
// "hwy/highway.h" from a file that includes "hwy/foreach_target.h".
#if defined(XWIRES_SRC_ACCEL_ROUND_BITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_ACCEL_ROUND_BITS_INL_H_
#undef XWIRES_SRC_ACCEL_ROUND_BITS_INL_H_
#else
#define XWIRES_SRC_ACCEL_ROUND_BITS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "xwires/core/accel_numerics.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rounds one vector of fp32 bit patterns, every case (NaN payloads, Inf,
// overflow, subnormals) as RoundOperand does.
template <OperandRounding kMode, bool kFlush, class DU>
HWY_INLINE hn::Vec<DU> RoundBits(DU du, hn::Vec<DU> u) {
  using VU = hn::Vec<DU>;
  const hn::RebindToSigned<DU> di;
  const VU abs = hn::And(u, hn::Set(du, 0x7fffffffu));
  const VU sign = hn::AndNot(hn::Set(du, 0x7fffffffu), u);
  // NaN: |u| > 0x7f800000 (as signed: both below 2^31).
  const auto nan = hn::RebindMask(
      du, hn::Gt(hn::BitCast(di, abs), hn::BitCast(di, hn::Set(du, 0x7f800000u))));
  const auto finite = hn::RebindMask(
      du, hn::Lt(hn::BitCast(di, abs), hn::BitCast(di, hn::Set(du, 0x7f800000u))));
  const VU tf32_mask = hn::Set(du, 0xffffe000u);
  if constexpr (kMode == OperandRounding::kTf32Rna || kMode == OperandRounding::kTf32Rz) {
    VU r = u;
    if constexpr (kMode == OperandRounding::kTf32Rna) {
      r = hn::IfThenElse(finite, hn::Add(u, hn::Set(du, 0x1000u)), u);
    }
    r = hn::And(r, tf32_mask);
    // A NaN keeps what survives of its payload, else the quiet NaN.
    const VU m = hn::And(u, tf32_mask);
    const auto m_nan = hn::RebindMask(
        du, hn::Gt(hn::BitCast(di, hn::And(m, hn::Set(du, 0x7fffffffu))),
                   hn::BitCast(di, hn::Set(du, 0x7f800000u))));
    const VU nan_val = hn::IfThenElse(m_nan, m, hn::Or(sign, hn::Set(du, 0x7fc00000u)));
    return hn::IfThenElse(nan, nan_val, r);
  } else if constexpr (kMode == OperandRounding::kTf32Rne) {
    const VU inc = hn::Add(hn::Set(du, 0xfffu), hn::And(hn::ShiftRight<13>(u), hn::Set(du, 1u)));
    const VU r = hn::And(hn::IfThenElse(finite, hn::Add(u, inc), u), tf32_mask);
    return hn::IfThenElse(nan, hn::Set(du, 0x7fffffffu), r);
  } else if constexpr (kMode == OperandRounding::kBf16Rne) {
    const VU inc = hn::Add(hn::Set(du, 0x7fffu), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u)));
    VU r = hn::And(hn::Add(u, inc), hn::Set(du, 0xffff0000u));
    if constexpr (kFlush) {
      const auto sub = hn::Eq(hn::And(r, hn::Set(du, 0x7f800000u)), hn::Zero(du));
      r = hn::IfThenElse(sub, hn::And(r, hn::Set(du, 0x80000000u)), r);
    }
    return hn::IfThenElse(nan, hn::Set(du, 0x7fc00000u), r);
  } else {  // kFp16Rne
    const hn::RebindToFloat<DU> df;
    // k = max(e - 10, -24); the addend 2^(k+23) has exponent field k + 150.
    const auto e = hn::Sub(hn::BitCast(di, hn::ShiftRight<23>(abs)), hn::Set(di, 127));
    const auto k = hn::Max(hn::Sub(e, hn::Set(di, 10)), hn::Set(di, -24));
    const auto s = hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 150))));
    const auto x = hn::BitCast(df, abs);
    const VU y = hn::BitCast(du, hn::Sub(hn::Add(x, s), s));
    const auto big = hn::RebindMask(
        du, hn::Lt(hn::BitCast(di, hn::Set(du, 0x477fefffu)), hn::BitCast(di, abs)));
    const VU r = hn::Or(sign, hn::IfThenElse(big, hn::Set(du, 0x7f800000u), y));
    return hn::IfThenElse(nan, hn::Or(sign, hn::Set(du, 0x7fc00000u)), r);
  }
}

// RoundBits for a vector without NaN or Inf lanes, where the recipes need
// no selects: TF32 and bf16 are an integer add (none for rz) and a mask,
// and a finite lane never carries into the sign (|u| + 0x7fff stays below
// 2^31), overflow to Inf included. fp16 has no shortcut.
template <OperandRounding kMode, bool kFlush, class DU>
HWY_INLINE hn::Vec<DU> RoundFiniteBits(DU du, hn::Vec<DU> u) {
  if constexpr (kMode == OperandRounding::kTf32Rna) {
    return hn::And(hn::Add(u, hn::Set(du, 0x1000u)), hn::Set(du, 0xffffe000u));
  } else if constexpr (kMode == OperandRounding::kTf32Rz) {
    return hn::And(u, hn::Set(du, 0xffffe000u));
  } else if constexpr (kMode == OperandRounding::kTf32Rne) {
    const auto inc =
        hn::Add(hn::Set(du, 0xfffu), hn::And(hn::ShiftRight<13>(u), hn::Set(du, 1u)));
    return hn::And(hn::Add(u, inc), hn::Set(du, 0xffffe000u));
  } else if constexpr (kMode == OperandRounding::kBf16Rne && !kFlush) {
    const auto inc =
        hn::Add(hn::Set(du, 0x7fffu), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u)));
    return hn::And(hn::Add(u, inc), hn::Set(du, 0xffff0000u));
  } else {
    return RoundBits<kMode, kFlush>(du, u);
  }
}

// RoundOperand on every lane of v (floats): the short recipe when no lane
// is NaN or Inf (one compare and a branch), else the full one.
template <OperandRounding kMode, bool kFlush, class DF>
HWY_INLINE hn::Vec<DF> RoundFloats(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto u = hn::BitCast(du, v);
  const auto abs = hn::BitCast(di, hn::And(u, hn::Set(du, 0x7fffffffu)));
  if (HWY_LIKELY(hn::AllTrue(di, hn::Lt(abs, hn::Set(di, 0x7f800000))))) {
    return hn::BitCast(df, RoundFiniteBits<kMode, kFlush>(du, u));
  }
  return hn::BitCast(df, RoundBits<kMode, kFlush>(du, u));
}

// dst[0, n) = RoundFloats of src[0, n) (dst may equal src), whole vectors
// then the tail through a zero-padded buffer.
template <OperandRounding kMode, bool kFlush>
HWY_INLINE void RoundSpan(const float* src, float* dst, int64_t n) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(RoundFloats<kMode, kFlush>(df, hn::LoadU(df, src + i)), df, dst + i);
  }
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)] = {};
    for (int64_t j = i; j < n; ++j) tail[j - i] = src[j];
    hn::Store(RoundFloats<kMode, kFlush>(df, hn::Load(df, tail)), df, tail);
    for (int64_t j = i; j < n; ++j) dst[j] = tail[j - i];
  }
}

// Calls fn(RoundingTag<mode, flush>()) with the rounding as compile-time
// constants (kFlush only for bf16); false, calling nothing, for kNone.
template <OperandRounding kM, bool kF>
struct RoundingTag {
  static constexpr OperandRounding kMode = kM;
  static constexpr bool kFlush = kF;
};
template <class Fn>
HWY_INLINE bool WithRounding(OperandRounding mode, bool flush, Fn&& fn) {
  switch (mode) {
    case OperandRounding::kTf32Rna: fn(RoundingTag<OperandRounding::kTf32Rna, false>()); break;
    case OperandRounding::kTf32Rne: fn(RoundingTag<OperandRounding::kTf32Rne, false>()); break;
    case OperandRounding::kTf32Rz: fn(RoundingTag<OperandRounding::kTf32Rz, false>()); break;
    case OperandRounding::kBf16Rne:
      if (flush) {
        fn(RoundingTag<OperandRounding::kBf16Rne, true>());
      } else {
        fn(RoundingTag<OperandRounding::kBf16Rne, false>());
      }
      break;
    case OperandRounding::kFp16Rne: fn(RoundingTag<OperandRounding::kFp16Rne, false>()); break;
    case OperandRounding::kNone: return false;
  }
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // XWIRES_SRC_ACCEL_ROUND_BITS_INL_H_ (per target)
