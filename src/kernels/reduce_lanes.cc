// The lanesK strips of reduce_lanes.h on every SIMD target. K lanes are
// K / N vectors of N = min(K, the target's lanes) floats, so each float lane
// is exactly one of the K chains whatever the vector width.
#include "src/kernels/reduce_lanes.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/reduce_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

template <int K, bool kDot, bool kFma>
void Strips(const float* a, float sa, const float* b, float sb, int64_t len, float* lane) {
  const hn::CappedTag<float, K> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int kMaxVectors = K;  // N >= 1
  const int n = static_cast<int>(hn::Lanes(d)), vectors = K / n;
  V acc[kMaxVectors];
  for (int v = 0; v < vectors; ++v) acc[v] = hn::LoadU(d, lane + v * n);
  const V shift_a = hn::Set(d, sa), shift_b = hn::Set(d, sb);
  for (int64_t i = 0; i < len; i += K) {
    for (int v = 0; v < vectors; ++v) {
      const V x = hn::Sub(hn::LoadU(d, a + i + v * n), shift_a);
      if constexpr (kDot) {
        acc[v] = Accumulate<kFma>(acc[v], x, hn::Sub(hn::LoadU(d, b + i + v * n), shift_b));
      } else {
        acc[v] = hn::Add(acc[v], x);
      }
    }
  }
  for (int v = 0; v < vectors; ++v) hn::StoreU(acc[v], d, lane + v * n);
}

template <int K>
void StripsOf(const float* a, float sa, const float* b, float sb, bool fma, int64_t len,
              float* lane) {
  if (b == nullptr) return Strips<K, false, false>(a, sa, b, sb, len, lane);
  if (fma) return Strips<K, true, true>(a, sa, b, sb, len, lane);
  Strips<K, true, false>(a, sa, b, sb, len, lane);
}

}  // namespace

void LanesStripsT(const float* a, float sa, const float* b, float sb, bool fma, int k,
                  int64_t len, float* lane) {
  switch (k) {
    case 4: return StripsOf<4>(a, sa, b, sb, fma, len, lane);
    case 8: return StripsOf<8>(a, sa, b, sb, fma, len, lane);
    default: return StripsOf<16>(a, sa, b, sb, fma, len, lane);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(LanesStripsT);

void LanesStrips(const float* a, float sa, const float* b, float sb, bool fma, int k,
                 int64_t len, float* lane) {
  HWY_DYNAMIC_DISPATCH(LanesStripsT)(a, sa, b, sb, fma, k, len, lane);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
