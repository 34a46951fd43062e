// Internal: arithmetic shared by the Highway kernels, compiled once per SIMD
// target. Include it after "hwy/highway.h" from a file that includes
// "hwy/foreach_target.h" (it uses Highway's per-target include guard).
//
// The rules that make the kernels give the same bits on every target:
//  * a lane is one output's accumulation chain in the profile's order, so
//    the vector width decides only how many outputs advance at once;
//  * a profile's FMA is one rounding per term on every target (hardware FMA
//    where HWY_NATIVE_FMA, else std::fma per lane), and without FMA a term
//    is a rounded product then a rounded add (the build never contracts);
//  * lanes are folded in a documented order on stored values, never with a
//    target's horizontal sum (ReduceSum's order differs by target).
#if defined(XWIRES_SRC_KERNELS_HWY_OPS_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_HWY_OPS_H_
#undef XWIRES_SRC_KERNELS_HWY_OPS_H_
#else
#define XWIRES_SRC_KERNELS_HWY_OPS_H_
#endif

#include <cmath>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The float vectors the kernels compute on (SVE/RVV are not compiled).
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// acc + a * b: with kFma one rounding, else a rounded product then a
// rounded add. The same bits on every target.
template <bool kFma, class V>
HWY_INLINE V Accumulate(V acc, V a, V b) {
  if constexpr (!kFma) {
    return hn::Add(acc, hn::Mul(a, b));
  } else {
#if HWY_NATIVE_FMA
    return hn::MulAdd(a, b, acc);
#else
    // SSE4, SSSE3, EMU128 and SCALAR have no fused multiply-add: Highway's
    // MulAdd there rounds twice, so fuse per lane (libm's fma is exact).
    const hn::DFromV<V> d;
    HWY_ALIGN float x[HWY_LANES(float)], y[HWY_LANES(float)], z[HWY_LANES(float)];
    hn::Store(a, d, x);
    hn::Store(b, d, y);
    hn::Store(acc, d, z);
    for (size_t i = 0; i < hn::Lanes(d); ++i) z[i] = std::fma(x[i], y[i], z[i]);
    return hn::Load(d, z);
#endif
  }
}

// Runtime-flag form, for callers that pick FMA per call.
template <class V>
HWY_INLINE V Accumulate(V acc, V a, V b, bool fma) {
  return fma ? Accumulate<true>(acc, a, b) : Accumulate<false>(acc, a, b);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
