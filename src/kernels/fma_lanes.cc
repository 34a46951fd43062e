// FmaLanes (fma_lanes.h) on every SIMD target: the same MulAddExact that the
// kernels' Accumulate<true> calls.
#include "src/kernels/fma_lanes.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/fma_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/hwy_copy.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

void FmaLanesT(const float* a, const float* b, const float* c, int64_t n, float* out) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF r = MulAddExact(hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i));
    hn::StoreU(r, d, out + i);
  }
  if (i == n) return;
  const int64_t rest = n - i;  // a partial vector, zero-padded (hwy_copy.h)
  const VF r = MulAddExact(LoadRange(d, a + i, 0, rest), LoadRange(d, b + i, 0, rest),
                           LoadRange(d, c + i, 0, rest));
  StorePrefix(d, r, rest, out + i);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(FmaLanesT);

void FmaLanes(const float* a, const float* b, const float* c, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(FmaLanesT)(a, b, c, n, out);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
