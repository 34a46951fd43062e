// Internal: XW_FMA_CLONES, for loops that call FmaF (src/fma_scalar.h)
// outside the SIMD kernels (the Adam updates, batch norm's fused loops).
//
// FmaF is one instruction where the compiler may use FMA, but in a portable
// (x86-64 baseline) build a libm call per element, or a call of the exact
// emulation where glibc's fmaf is software. Marked functions get a second
// clone compiled for x86-64-v3 (AVX2 + FMA), chosen when the program loads
// (GCC's target_clones), so they stay vectorized there: FmaF's run-time test
// is loop-invariant, and GCC unswitches small loops on it into a vector FMA
// loop and a scalar emulated one (taken when glibc's fmaf is software, e.g.
// under GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2,-FMA4); larger loops pick
// FmaOn<FmaPathNow()> outside instead (the Adam updates). fma, sqrt and
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
