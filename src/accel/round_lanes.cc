// RoundLanes (round_lanes.h) on every SIMD target: the bit recipes of
// accel_numerics.cc on uint32 lanes (integer adds, masks and selects), and
// binary16 by the exact float sum (|x| + 2^(k+23)) - 2^(k+23), which rounds
// |x| to nearest even at the binary16 spacing 2^k of its binade
// (k = max(e - 10, -24)); no step depends on the lane width.
#include <cstdint>

#include "src/accel/round_lanes.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/accel/round_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace {

using DU = hn::ScalableTag<uint32_t>;
using DI = hn::RebindToSigned<DU>;
using DF = hn::RebindToFloat<DU>;
using VU = hn::Vec<DU>;

// Rounds one vector of fp32 bit patterns.
template <OperandRounding kMode, bool kFlush>
HWY_INLINE VU RoundBits(VU u) {
  const DU du;
  const DI di;
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
    const DF df;
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

template <OperandRounding kMode, bool kFlush>
void Lanes(const float* src, float* dst, int64_t n) {
  const DU du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(du));
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  uint32_t* d = reinterpret_cast<uint32_t*>(dst);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(RoundBits<kMode, kFlush>(hn::LoadU(du, s + i)), du, d + i);
  }
  if (i < n) {
    HWY_ALIGN uint32_t tail[hn::MaxLanes(du)] = {};
    for (int64_t j = i; j < n; ++j) tail[j - i] = s[j];
    hn::Store(RoundBits<kMode, kFlush>(hn::Load(du, tail)), du, tail);
    for (int64_t j = i; j < n; ++j) d[j] = tail[j - i];
  }
}

}  // namespace

void RoundLanesT(const float* src, float* dst, int64_t n, OperandRounding mode, bool flush) {
  switch (mode) {
    case OperandRounding::kTf32Rna: return Lanes<OperandRounding::kTf32Rna, false>(src, dst, n);
    case OperandRounding::kTf32Rne: return Lanes<OperandRounding::kTf32Rne, false>(src, dst, n);
    case OperandRounding::kTf32Rz: return Lanes<OperandRounding::kTf32Rz, false>(src, dst, n);
    case OperandRounding::kBf16Rne:
      if (flush) return Lanes<OperandRounding::kBf16Rne, true>(src, dst, n);
      return Lanes<OperandRounding::kBf16Rne, false>(src, dst, n);
    case OperandRounding::kFp16Rne: return Lanes<OperandRounding::kFp16Rne, false>(src, dst, n);
    case OperandRounding::kNone: break;
  }
  if (dst != src) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
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

void RoundLanes(const float* src, float* dst, int64_t n, OperandRounding mode,
                bool flush_bf16_subnormals) {
  HWY_DYNAMIC_DISPATCH(RoundLanesT)(src, dst, n, mode, flush_bf16_subnormals);
}

}  // namespace accel
}  // namespace xw
#endif  // HWY_ONCE
