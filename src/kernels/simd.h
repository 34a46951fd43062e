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
// GCC 12's avx512fintrin.h builds "undefined" vectors as `__m512 __Y = __Y;`,
// which -Wuninitialized reports wherever such an intrinsic is inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// Without AVX-512 the 64-byte vectors are returned in memory; these helpers
// are internal and inlined, so the ABI note GCC emits does not apply.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
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

// dst[i * ld_dst + j] = src[j * ld_src + i] for a 16x16 block.
#if defined(__AVX512F__)
// r[i] = column i of the 16x16 block at src (row stride ld_src), in
// registers. The loops are unrolled here because GCC would otherwise turn
// the array moves into memcpy calls through the stack.
inline void Transpose16x16Regs(const float* src, int64_t ld_src, __m512 (&r)[16]) {
  // Classic 4-stage shuffle network: 32-bit pairs, 64-bit pairs, 128-bit
  // lanes, 256-bit halves.
  __m512 t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld_src);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) {
    if ((i & 4) != 0) continue;  // i in {0..3, 8..11}
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
  }
}
#endif

inline void Transpose16x16(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
#if defined(__AVX512F__)
  __m512 r[16];
  Transpose16x16Regs(src, ld_src, r);
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ld_dst, r[i]);
#else
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) dst[i * ld_dst + j] = src[j * ld_src + i];
  }
#endif
}

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_SIMD_H_
