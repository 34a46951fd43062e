// Internal: a 16-float vector type for the kernels' inner loops.
//
// GCC/Clang vector extensions lower to the widest registers the target has
// (one zmm with AVX-512, two ymm with AVX2, four xmm with SSE2), so the same
// source serves the native and the portable build. Multiplies and adds are
// separately rounded (the build uses -ffp-contract=off); FmaV is the only
// fused operation and is used only where a numerics knob asks for FMA.
#ifndef XWIRES_SRC_KERNELS_SIMD_H_
#define XWIRES_SRC_KERNELS_SIMD_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace xw {
namespace kernels {

typedef float V16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

inline V16 LoadV(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void StoreV(float* p, V16 v) { std::memcpy(p, &v, sizeof(v)); }
// A broadcast (not V16{} + x, which is an add and turns -0 into +0).
inline V16 SplatV(float x) { return V16{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
inline V16 ZeroV() { return V16{}; }

// a * b + c with a single rounding.
inline V16 FmaV(V16 a, V16 b, V16 c) {
#if defined(__AVX512F__)
  return reinterpret_cast<V16>(_mm512_fmadd_ps(reinterpret_cast<__m512>(a),
                                               reinterpret_cast<__m512>(b),
                                               reinterpret_cast<__m512>(c)));
#elif defined(__FMA__)
  __m256 al, ah, bl, bh, cl, ch;
  std::memcpy(&al, &a, 32), std::memcpy(&ah, reinterpret_cast<char*>(&a) + 32, 32);
  std::memcpy(&bl, &b, 32), std::memcpy(&bh, reinterpret_cast<char*>(&b) + 32, 32);
  std::memcpy(&cl, &c, 32), std::memcpy(&ch, reinterpret_cast<char*>(&c) + 32, 32);
  const __m256 rl = _mm256_fmadd_ps(al, bl, cl), rh = _mm256_fmadd_ps(ah, bh, ch);
  V16 r;
  std::memcpy(&r, &rl, 32), std::memcpy(reinterpret_cast<char*>(&r) + 32, &rh, 32);
  return r;
#else
  V16 r;
  for (int i = 0; i < 16; ++i) r[i] = std::fma(a[i], b[i], c[i]);
  return r;
#endif
}

inline V16 AbsV(V16 a) {
  return reinterpret_cast<V16>(reinterpret_cast<I16>(a) & 0x7fffffff);
}

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_SIMD_H_
