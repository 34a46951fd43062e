// TensorCorePanel (accel_gemm.h) on every SIMD target. A lane is one
// output's accumulator (an fp32 value held in a double); the kPanel lanes of
// a row are kPanel / N vectors of N doubles, so the vector width decides only
// how many outputs advance at once. Every operation on a lane is exact in
// IEEE double (products of two floats have at most 48 bits; scaling by
// powers of two; std::trunc; sums of integers below 2^53; clearing mantissa
// bits), so all targets give the bits of TensorCoreBlockFma.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/accel/accel_gemm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/accel/accel_tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/accel/tc_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace {


using tc_lanes::ConvertRz;
using tc_lanes::MaxAbs;
using tc_lanes::TruncToInt;

// The range of x[i * ld + j] (i < rows, j < cols) for the float panels
// (accel_gemm.h, OperandRange), in one pass of four operations a vector:
// the magnitudes' bits less one folded by unsigned minimum (a zero wraps to
// the largest value, so the minimum is the smallest nonzero magnitude),
// unsigned maximum and OR (the low 12 fraction bits of every value at
// once). Subnormals and Inf/NaN show in the minimum and maximum.
OperandRange OperandRangeImpl(const float* x, int64_t rows, int64_t cols, int64_t ld) {
  const hn::ScalableTag<uint32_t> du;
  const size_t n = hn::Lanes(du);
  const auto abs_mask = hn::Set(du, 0x7fffffffu), one = hn::Set(du, 1u);
  auto lo = hn::Set(du, 0xffffffffu), hi = hn::Zero(du), any = hn::Zero(du);
  for (int64_t i = 0; i < rows; ++i) {
    const uint32_t* r = reinterpret_cast<const uint32_t*>(x + i * ld);
    int64_t j = 0;
    for (; j + static_cast<int64_t>(n) <= cols; j += n) {
      const auto u = hn::And(hn::LoadU(du, r + j), abs_mask);
      lo = hn::Min(lo, hn::Sub(u, one));
      hi = hn::Max(hi, u);
      any = hn::Or(any, u);
    }
    for (; j < cols; ++j) {  // the row's last lanes, one at a time
      const auto u = hn::Set(du, r[j] & 0x7fffffffu);
      lo = hn::Min(lo, hn::Sub(u, one));
      hi = hn::Max(hi, u);
      any = hn::Or(any, u);
    }
  }
  HWY_ALIGN uint32_t lanes[3][hn::MaxLanes(du)];
  hn::Store(lo, du, lanes[0]);
  hn::Store(hi, du, lanes[1]);
  hn::Store(any, du, lanes[2]);
  uint32_t lo_bits = 0xffffffffu, hi_bits = 0, any_bits = 0;
  for (size_t l = 0; l < n; ++l) {
    lo_bits = std::min(lo_bits, lanes[0][l]);
    hi_bits = std::max(hi_bits, lanes[1][l]);
    any_bits |= lanes[2][l];
  }
  OperandRange range;
  if (hi_bits == 0) {  // all zero
    range.reduced = true;
    return range;
  }
  const uint32_t min_bits = lo_bits + 1;
  range.reduced = (any_bits & 0xfffu) == 0 && min_bits >= 0x00800000u && hi_bits < 0x7f800000u;
  range.min_nonzero = std::bit_cast<float>(min_bits);
  range.max_abs = std::bit_cast<float>(hi_bits);
  return range;
}

using DD = hn::CappedTag<double, kPanel>;
using DF = hn::CappedTag<float, kPanel>;

template <int kVectors>
void PanelF64(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows, int64_t kk,
              const TensorCoreSpec& tc, double* acc, bool* bad) {
  const DD d;
  const hn::Rebind<float, DD> df;
  const hn::RebindToUnsigned<DD> du;
  using V = hn::Vec<DD>;
  constexpr int vectors = kVectors;
  const int n = static_cast<int>(hn::Lanes(d));
  const int block = tc.block;
  // The block's grid is 2^(E - 23 - align_bits) for the largest magnitude
  // 2^E <= |t| < 2^(E+1): scale by down = 2^(23 + align) / 2^E, truncate,
  // sum, scale back by up = 2^E / 2^(23 + align). Both factors are exact
  // (E lies in [-298, 255] for products of floats and fp32 accumulators).
  // down's bits: the exponent field 1023 + 23 + align - E, as an integer
  // subtraction from the field of 2^E.
  const auto down_base = hn::Set(du, static_cast<uint64_t>(2046 + 23 + tc.align_bits) << 52);
  const V inv_grid = hn::Set(d, std::ldexp(1.0, -(23 + tc.align_bits)));
  const V exp_mask = hn::BitCast(d, hn::Set(du, 0x7ff0000000000000ull));
  // Round toward zero to fp32 = keep the top 23 of the 52 fraction bits,
  // for results in fp32's normal range; past FLT_MAX the result is FLT_MAX.
  const V rz_mask = hn::BitCast(d, hn::Set(du, 0xffffffffe0000000ull));
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const V fmax = hn::Set(d, static_cast<double>(FLT_MAX));
  const V fmin = hn::Set(d, static_cast<double>(-FLT_MAX));
  const V normal = hn::Set(d, static_cast<double>(FLT_MIN));
  const V inf = hn::Set(d, HUGE_VAL);
  HWY_ALIGN double prod[64 * kPanel];
  for (int64_t r = 0; r < rows; ++r) {
    double* ac = acc + r * kPanel;
    const float* ar = a + r * lda;
    V c[kVectors], m[kVectors];
    for (int v = 0; v < vectors; ++v) c[v] = hn::LoadU(d, ac + v * n);
    auto flagged = hn::Lt(zero, zero);
    for (int64_t t0 = 0; t0 < kk; t0 += block) {
      const int terms = static_cast<int>(kk - t0 < block ? kk - t0 : block);
      for (int v = 0; v < vectors; ++v) m[v] = hn::Abs(c[v]);
      for (int t = 0; t < terms; ++t) {
        const V av = hn::Set(d, static_cast<double>(ar[t0 + t]));
        const float* br = b + (t0 + t) * ldb;
        double* pt = prod + t * kPanel;
        for (int v = 0; v < vectors; ++v) {
          const V p = hn::Mul(hn::PromoteTo(d, hn::LoadU(df, br + v * n)), av);
          hn::Store(p, d, pt + v * n);
          m[v] = hn::Max(m[v], hn::Abs(p));
        }
      }
      for (int v = 0; v < vectors; ++v) {
        V pow2 = hn::And(m[v], exp_mask);
        pow2 = hn::IfThenElse(hn::Eq(pow2, zero), one, pow2);  // all terms zero
        const V down = hn::BitCast(d, hn::Sub(down_base, hn::BitCast(du, pow2)));
        const V up = hn::Mul(pow2, inv_grid);
        V s = hn::Trunc(hn::Mul(c[v], down));
        for (int t = 0; t < terms; ++t) {
          s = hn::Add(s, hn::Trunc(hn::Mul(hn::Load(d, prod + t * kPanel + v * n), down)));
        }
        const V res = hn::Mul(s, up);
        const V mag = hn::Abs(res);
        // Inf/NaN terms make res non-finite; fp32 subnormal results need
        // the scalar rounding.
        const auto ok = hn::And(hn::Lt(mag, inf), hn::Or(hn::Ge(mag, normal), hn::Eq(res, zero)));
        flagged = hn::Or(flagged, hn::Not(ok));
        c[v] = hn::Min(hn::Max(hn::And(res, rz_mask), fmin), fmax);
      }
    }
    for (int v = 0; v < vectors; ++v) hn::StoreU(c[v], d, ac + v * n);
    if (!hn::AllFalse(d, flagged)) bad[r] = true;
  }
}


// The same block FMAs on float lanes, for operands that F32PanelApplies
// admits: every product is then exact in fp32, zero or in
// [2^(align - 103), 2^127), so E lies in [align - 103, 127] and both scale
// factors are normal floats; the scaled, truncated terms are integers below
// 2^(24 + align) whose sum over a block fits int32. The sum s is rounded
// toward zero to 24 bits (ConvertRz) and scaled back exactly: a live lane's
// result is zero or at least up >= 2^-126, never subnormal, and stays below
// 2^127, so nothing is handed back (bad is left as it is).
// kBlock > 0: the block size as a constant, so that a whole block's
// products stay in registers (the last, shorter block runs with a run-time
// count); kBlock == 0: any block size.
template <int kVectors, int kRows, int kBlock>
void PanelF32Rows(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t kk,
                  const TensorCoreSpec& tc, float* acc) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  using V = hn::Vec<DF>;
  using VI = hn::Vec<decltype(di)>;
  constexpr int kChains = kVectors * kRows;
  constexpr int kMaxTerms = kBlock > 0 ? kBlock : 64;
  const int n = static_cast<int>(hn::Lanes(d));
  const int block = kBlock > 0 ? kBlock : tc.block;
  const auto exp_mask = hn::Set(du, 0x7f800000u);
  // Exponent fields: down = 2^(23 + align - E) has 127 + 23 + align - E =
  // 277 + align - field(2^E); up = 2^(E - 23 - align) has field - 23 - align.
  const auto down_base = hn::Set(du, static_cast<uint32_t>(277 + tc.align_bits) << 23);
  const auto up_sub = hn::Set(du, static_cast<uint32_t>(23 + tc.align_bits) << 23);
  // Every nonzero product is at least 2^(align - 103) (F32PanelApplies), so
  // starting the block's largest magnitude there changes no grid where a
  // product is nonzero, and keeps both factors normal where all are zero
  // (c, a multiple of a grid at least as fine, then stays as it is).
  const V floor = hn::BitCast(d, hn::Set(du, static_cast<uint32_t>(24 + tc.align_bits) << 23));
  // prod[t * kChains + chain], chain = row * kVectors + v: kRows rows
  // advance together (independent accumulators, so their block chains
  // overlap in time) and share each load of B.
  V prod[kMaxTerms * kChains];
  V c[kChains], mp[kChains];
  // Round toward zero for the conversions (x86 below AVX-512), set before
  // acc is loaded and restored after it is stored (tc_lanes-inl.h).
  const tc_lanes::RoundTowardZeroMode rz;
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) c[r * kVectors + v] = hn::LoadU(d, acc + r * kPanel + v * n);
  }
  // One block FMA of `terms` terms from t0 (terms: an int or a constant).
  auto block_fma = [&](int64_t t0, auto terms) {
    for (int q = 0; q < kChains; ++q) mp[q] = floor;
    for (int t = 0; t < terms; ++t) {
      const float* br = b + (t0 + t) * ldb;
      for (int v = 0; v < kVectors; ++v) {
        const V bv = hn::LoadU(d, br + v * n);
        for (int r = 0; r < kRows; ++r) {
          const int q = r * kVectors + v;
          const V p = hn::Mul(bv, hn::Set(d, a[r * lda + t0 + t]));
          prod[t * kChains + q] = p;
          mp[q] = MaxAbs(mp[q], p);
        }
      }
    }
    for (int q = 0; q < kChains; ++q) {
      const auto field = hn::And(hn::BitCast(du, MaxAbs(mp[q], c[q])), exp_mask);
      const V down = hn::BitCast(d, hn::Sub(down_base, field));
      const V up = hn::BitCast(d, hn::Sub(field, up_sub));
      VI s = TruncToInt(di, hn::Mul(c[q], down));
      for (int t = 0; t < terms; ++t) {
        s = hn::Add(s, TruncToInt(di, hn::Mul(prod[t * kChains + q], down)));
      }
      c[q] = hn::Mul(ConvertRz(rz, d, s), up);
    }
  };
  int64_t t0 = 0;
  if constexpr (kBlock > 0) {
    for (; t0 + kBlock <= kk; t0 += kBlock) block_fma(t0, std::integral_constant<int, kBlock>{});
  }
  for (; t0 < kk; t0 += block) block_fma(t0, static_cast<int>(kk - t0 < block ? kk - t0 : block));
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) hn::StoreU(c[r * kVectors + v], d, acc + r * kPanel + v * n);
  }
}

// Rows in groups of kGroup (independent chains), the rest one by one.
template <int kVectors, int kBlock>
void PanelF32Blocks(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                    int64_t kk, const TensorCoreSpec& tc, float* acc) {
  constexpr int kGroup = kVectors >= 4 ? 1 : 4 / kVectors;
  int64_t r = 0;
  for (; r + kGroup <= rows; r += kGroup) {
    PanelF32Rows<kVectors, kGroup, kBlock>(a + r * lda, lda, b, ldb, kk, tc, acc + r * kPanel);
  }
  for (; r < rows; ++r) {
    PanelF32Rows<kVectors, 1, kBlock>(a + r * lda, lda, b, ldb, kk, tc, acc + r * kPanel);
  }
}

template <int kVectors>
void PanelF32(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows, int64_t kk,
              const TensorCoreSpec& tc, float* acc, bool* /*bad*/) {
  switch (tc.block) {  // the presets' block sizes as constants
    case 4: return PanelF32Blocks<kVectors, 4>(a, lda, b, ldb, rows, kk, tc, acc);
    case 8: return PanelF32Blocks<kVectors, 8>(a, lda, b, ldb, rows, kk, tc, acc);
    case 16: return PanelF32Blocks<kVectors, 16>(a, lda, b, ldb, rows, kk, tc, acc);
    default: return PanelF32Blocks<kVectors, 0>(a, lda, b, ldb, rows, kk, tc, acc);
  }
}

}  // namespace

OperandRange OperandRangeT(const float* x, int64_t rows, int64_t cols, int64_t ld) {
  return OperandRangeImpl(x, rows, cols, ld);
}

void TensorCorePanelT(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                      int64_t kk, const TensorCoreSpec& tc, double* acc, bool* bad) {
  switch (kPanel / hn::Lanes(DD())) {
    case 1: return PanelF64<1>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 2: return PanelF64<2>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 4: return PanelF64<4>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 8: return PanelF64<8>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    default: return PanelF64<16>(a, lda, b, ldb, rows, kk, tc, acc, bad);
  }
}

void TensorCorePanelF32T(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                         int64_t kk, const TensorCoreSpec& tc, float* acc, bool* bad) {
  switch (kPanel / hn::Lanes(DF())) {
    case 1: return PanelF32<1>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 2: return PanelF32<2>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 4: return PanelF32<4>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    case 8: return PanelF32<8>(a, lda, b, ldb, rows, kk, tc, acc, bad);
    default: return PanelF32<16>(a, lda, b, ldb, rows, kk, tc, acc, bad);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace accel {

HWY_EXPORT(TensorCorePanelT);
HWY_EXPORT(TensorCorePanelF32T);
HWY_EXPORT(OperandRangeT);

OperandRange F32PanelRange(const float* x, int64_t rows, int64_t cols, int64_t ld) {
  return HWY_DYNAMIC_DISPATCH(OperandRangeT)(x, rows, cols, ld);
}

void TensorCorePanel(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                     int64_t kk, const TensorCoreSpec& tc, double* acc, bool* bad) {
  HWY_DYNAMIC_DISPATCH(TensorCorePanelT)(a, lda, b, ldb, rows, kk, tc, acc, bad);
}

void TensorCorePanelF32(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                        int64_t kk, const TensorCoreSpec& tc, float* acc, bool* bad) {
  HWY_DYNAMIC_DISPATCH(TensorCorePanelF32T)(a, lda, b, ldb, rows, kk, tc, acc, bad);
}

}  // namespace accel
}  // namespace xw
#endif  // HWY_ONCE
