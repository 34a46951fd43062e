// Internal: XW_FMA_CLONES, for loops that call std::fma outside the SIMD
// kernels (the Adam updates).
//
// std::fma is one instruction where the compiler may use FMA, but a libm call
// per element in a portable (x86-64 baseline) build. Marked functions get a
// second clone compiled for x86-64-v3 (AVX2 + FMA), chosen when the program
// loads (GCC's target_clones), so they stay vectorized there. fma, sqrt and
// division are exactly rounded, so every clone gives the same bits. A build
// whose own ISA has FMA (native, -march=haswell) needs no clone: there the
// clone would only narrow AVX-512 code to AVX2.
#ifndef XWIRES_SRC_FMA_CLONES_H_
#define XWIRES_SRC_FMA_CLONES_H_

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__FMA__)
#define XW_FMA_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define XW_FMA_CLONES
#endif

#endif  // XWIRES_SRC_FMA_CLONES_H_
