// Internal: arithmetic shared by the Highway kernels, compiled once per SIMD
// target. Include it after "hwy/highway.h" from a file that includes
// "hwy/foreach_target.h" (it uses Highway's per-target include guard).
//
// The rules that make the kernels give the same bits on every target:
//  * a lane is one output's accumulation chain in the profile's order, so
//    the vector width decides only how many outputs advance at once;
//  * a profile's FMA is one rounding per term on every target (hardware FMA
//    where HWY_NATIVE_FMA, else an exact emulation in double lanes:
//    MulAddExact, fma_emu-inl.h), and without FMA a term is a rounded
//    product then a rounded add (the build never contracts);
//  * lanes are folded in a documented order on stored values, never with a
//    target's horizontal sum (ReduceSum's order differs by target).
#if defined(XWIRES_SRC_KERNELS_HWY_OPS_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_HWY_OPS_H_
#undef XWIRES_SRC_KERNELS_HWY_OPS_H_
#else
#define XWIRES_SRC_KERNELS_HWY_OPS_H_
#endif

#include "hwy/highway.h"
#include "src/kernels/fma_emu-inl.h"

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
    // MulAddExact: the FMA instruction where the target has one, else an
    // exact emulation in double lanes (fma_emu-inl.h); Highway's MulAdd
    // rounds twice on SSE4, SSSE3, EMU128 and SCALAR.
    return MulAddExact(a, b, acc);
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
