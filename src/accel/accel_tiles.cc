// TensorCorePanel (accel_gemm.h) on every SIMD target. A lane is one
// output's accumulator (an fp32 value held in a double); the kPanel lanes of
// a row are kPanel / N vectors of N doubles, so the vector width decides only
// how many outputs advance at once. Every operation on a lane is exact in
// IEEE double (products of two floats have at most 48 bits; scaling by
// powers of two; std::trunc; sums of integers below 2^53; clearing mantissa
// bits), so all targets give the bits of TensorCoreBlockFma.
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "src/accel/accel_gemm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/accel/accel_tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void TensorCorePanelT(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                      int64_t kk, const TensorCoreSpec& tc, double* acc, bool* bad) {
  const hn::CappedTag<double, kPanel> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::RebindToUnsigned<decltype(d)> du;
  using V = hn::Vec<decltype(d)>;
  constexpr int kMaxVectors = static_cast<int>(kPanel);  // N >= 1
  const int n = static_cast<int>(hn::Lanes(d)), vectors = static_cast<int>(kPanel) / n;
  const int block = tc.block;
  // The block's grid is 2^(E - 23 - align_bits) for the largest magnitude
  // 2^E <= |t| < 2^(E+1): scale by down = 2^(23 + align) / 2^E, truncate,
  // sum, scale back by up = 2^E / 2^(23 + align). Both factors are exact
  // (E lies in [-298, 255] for products of floats and fp32 accumulators).
  const V grid = hn::Set(d, std::ldexp(1.0, 23 + tc.align_bits));
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
    V c[kMaxVectors], m[kMaxVectors];
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
        const V down = hn::Div(grid, pow2), up = hn::Mul(pow2, inv_grid);
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

}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace accel {

HWY_EXPORT(TensorCorePanelT);

void TensorCorePanel(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                     int64_t kk, const TensorCoreSpec& tc, double* acc, bool* bad) {
  HWY_DYNAMIC_DISPATCH(TensorCorePanelT)(a, lda, b, ldb, rows, kk, tc, acc, bad);
}

}  // namespace accel
}  // namespace xw
#endif  // HWY_ONCE
