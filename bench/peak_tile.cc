// The arithmetic ceiling of the kernels' register tiles on the dispatched
// SIMD target: a tile of 6 rows x V vectors (V = 4 with 32 vector registers,
// 2 with 16; or 8 x 2 on request), as the convolution and GEMM tiles hold it, run over a 64-term
// panel that stays in L1: per term V vector loads, 6 broadcasts and 6 x V
// multiply-adds into the accumulators. Fused chains are one FMA per term;
// unfused ones (the reference profile's) a product, then an add that depends
// on it. Nothing else runs, so a kernel's GFLOP/s over this rate is how
// close it is to what the core can do in that arithmetic.
#include "bench/peak_tile.h"

#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peak_tile.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using kernels::HWY_NAMESPACE::Accumulate;

#if HWY_ARCH_ARM_A64 || (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)
constexpr int kWideVectors = 4;
#else
constexpr int kWideVectors = 2;
#endif
constexpr int kTerms = 64;

template <bool kFma, int kRows, int kVectors, class D>
HWY_NOINLINE double Tile(D d, int64_t reps) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN float a[kTerms * kRows];
  HWY_ALIGN float b[kTerms * kVectors * hn::MaxLanes(d)];
  // Values near 1 keep every chain finite and normal for any reps.
  for (int i = 0; i < kTerms * kRows; ++i) a[i] = 1.0f - 1e-7f * static_cast<float>(i % 97);
  for (int64_t i = 0; i < kTerms * kVectors * lanes; ++i) {
    b[i] = 1e-6f * static_cast<float>(i % 89);
  }
  V acc[kRows][kVectors];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t rep = 0; rep < reps; ++rep) {
    const float* ap = a;
    const float* bp = b;
    for (int t = 0; t < kTerms; ++t, ap += kRows, bp += kVectors * lanes) {
      V x[kVectors];
      for (int v = 0; v < kVectors; ++v) x[v] = hn::Load(d, bp + v * lanes);
      for (int r = 0; r < kRows; ++r) {
        const V w = hn::Set(d, ap[r]);
        for (int v = 0; v < kVectors; ++v) acc[r][v] = Accumulate<kFma>(acc[r][v], w, x[v]);
      }
    }
  }
  // The sum keeps the chains live; its value is irrelevant.
  V sum = hn::Zero(d);
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) sum = hn::Add(sum, acc[r][v]);
  }
  volatile float sink = hn::GetLane(sum);
  (void)sink;
  return 2.0 * reps * kTerms * kRows * kVectors * static_cast<double>(lanes);
}

template <int kRows, int kVectors>
double TileAtWidth(bool fma, bool half_width, int64_t reps) {
#if HWY_TARGET != HWY_SCALAR
  if (half_width && hn::Lanes(hn::ScalableTag<float>()) >= 16) {
    const hn::CappedTag<float, 8> d8;
    return fma ? Tile<true, kRows, kVectors>(d8, reps) : Tile<false, kRows, kVectors>(d8, reps);
  }
#endif
  const hn::ScalableTag<float> d;
  return fma ? Tile<true, kRows, kVectors>(d, reps) : Tile<false, kRows, kVectors>(d, reps);
}

double TileFlops(bool fma, bool half_width, bool narrow, int64_t reps) {
  if (narrow && kWideVectors > 2) return TileAtWidth<8, 2>(fma, half_width, reps);
  return TileAtWidth<6, kWideVectors>(fma, half_width, reps);
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace bench {

HWY_EXPORT(TileFlops);

double TileFlops(bool fma, bool half_width, bool narrow, int64_t reps) {
  return HWY_DYNAMIC_DISPATCH(TileFlops)(fma, half_width, narrow, reps);
}

}  // namespace bench
}  // namespace xw
#endif  // HWY_ONCE
