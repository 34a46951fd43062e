// Internal: masked vector copies for ragged edges, compiled once per SIMD
// target (Highway 1.0.3 has no LoadN/StoreN). Include it after
// "hwy/highway.h" and "src/kernels/hwy_ops.h" from a file that includes
// "hwy/foreach_target.h" (it uses Highway's per-target include guard).
#if defined(XWIRES_SRC_KERNELS_HWY_COPY_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_HWY_COPY_H_
#undef XWIRES_SRC_KERNELS_HWY_COPY_H_
#else
#define XWIRES_SRC_KERNELS_HWY_COPY_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

// Lanes [a, b) of p, zeros elsewhere (0 <= a < b <= Lanes); reads nothing
// outside p[a, b), so padding and row ends cost no branch and no fault.
HWY_INLINE VF LoadRange(DF d, const float* p, int64_t a, int64_t b) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // AVX2's vmaskmov and AVX-512's masked loads do not touch masked-off lanes.
  const auto m = hn::AndNot(hn::FirstN(d, static_cast<size_t>(a)),
                            hn::FirstN(d, static_cast<size_t>(b)));
  return hn::MaskedLoad(m, d, p);
#else
  // Highway 1.0.3's MaskedLoad loads the whole aligned vector on SSE4, SSSE3,
  // NEON and the emulated targets: stage the lanes through a zeroed buffer.
  HWY_ALIGN float buf[HWY_LANES(float)] = {};
  std::memcpy(buf + a, p + a, static_cast<size_t>(b - a) * sizeof(float));
  return hn::Load(d, buf);
#endif
}

// p[0, n) = the first n lanes of v (0 < n <= Lanes); nothing else is written.
HWY_INLINE void StorePrefix(DF d, VF v, int64_t n, float* p) {
  if (n == static_cast<int64_t>(hn::Lanes(d))) {
    hn::StoreU(v, d, p);
    return;
  }
#if HWY_ARCH_X86
  // x86's BlendedStore touches only the masked lanes (AVX2 and AVX-512 masked
  // stores; lane by lane on SSE4, SSSE3 and the emulated targets).
  hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  // NEON's BlendedStore reloads and rewrites the whole vector: past p[n) that
  // races with the thread that owns those floats and can fault at the end
  // of a buffer. Stage the lanes instead.
  HWY_ALIGN float buf[HWY_LANES(float)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, static_cast<size_t>(n) * sizeof(float));
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
