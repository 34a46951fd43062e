// Internal: FmaF, the library's one scalar float fused multiply-add outside
// the SIMD kernels (batch norm, reductions, Axpy, Adam).
//
// std::fma(float, float, float) is one instruction where the build's ISA has
// FMA (native builds on FMA hardware, aarch64). A portable x86-64 build
// (baseline ISA, no -mfma) calls libm's fmaf instead: glibc answers it with
// the FMA instruction behind an ifunc where the CPU has FMA and AVX2 (or
// FMA4), and otherwise with its generic software fmaf, which switches the
// floating-point environment on every call (about 100 times slower). FmaF
// gives the same bits as std::fma on every CPU and stays fast on both:
// where glibc's fmaf is the instruction it calls std::fma (inlined as the
// instruction in code compiled for FMA, e.g. an XW_FMA_CLONES clone), and
// elsewhere it runs the kernels' exact emulation in double precision with
// rounding to odd (src/kernels/fma_emu_scalar.h), inlined. NaN results are
// NaN either way; their payload is the FMA path's (the CPU's or libm's
// choice) or the emulation's (the first NaN operand, quieted).
#ifndef XWIRES_SRC_FMA_SCALAR_H_
#define XWIRES_SRC_FMA_SCALAR_H_

#include <cmath>

#include "src/kernels/fma_emu_scalar.h"

#if defined(__x86_64__) && !defined(__FMA__)
// libm's fmaf may be software: FmaF decides at run time.
#define XW_FMAF_RUNTIME 1
#else
#define XW_FMAF_RUNTIME 0
#endif

namespace xw {

namespace fma_internal {
// Whether FmaF calls std::fma (true) or emulates (false). Set once when the
// library loads (fma_scalar.cc); false until then, which is exact too.
extern bool g_fma_instruction;
}  // namespace fma_internal

// a * b + c rounded once to float: the bits of std::fma (NaN: see above).
// Thread-safe.
inline float FmaF(float a, float b, float c) {
#if XW_FMAF_RUNTIME
  // A loop-invariant test: compilers hoist it out of loops (and keep the
  // instruction path vectorised in FMA code).
  if (__builtin_expect(fma_internal::g_fma_instruction, 1)) return std::fma(a, b, c);
  return kernels::FmaEmulated(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Whether FmaF uses the FMA instruction (through libm's fmaf, or inlined)
// rather than the emulation on this CPU. On x86-64 without -mfma this
// follows glibc's own choice for fmaf (FMA and AVX2 usable, or FMA4; so
// GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2,-FMA4 turns both off), on
// other C libraries the CPU's FMA flag. Thread-safe.
bool FmaFUsesInstruction();

// Test seam: force the emulation (true) or restore the CPU's choice
// (false). Not safe while other threads call FmaF; the bits do not change.
void ForceFmaFEmulationForTest(bool emulate);

}  // namespace xw

#endif  // XWIRES_SRC_FMA_SCALAR_H_
