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
// elsewhere it calls the kernels' exact emulation in double precision with
// rounding to odd (src/kernels/fma_emu_scalar.h). NaN results are
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
// kernels::FmaEmulated, out of line: inlined, its rare paths would make
// loops over FmaF too large for GCC to unswitch them on the test above.
float FmaEmulatedCall(float a, float b, float c);
}  // namespace fma_internal

// a * b + c rounded once to float: the bits of std::fma (NaN: see above).
// Thread-safe.
inline float FmaF(float a, float b, float c) {
#if XW_FMAF_RUNTIME
  // A loop-invariant test: GCC unswitches loops on it, so the instruction
  // path stays vectorized in FMA code (the x86-64-v3 clones).
  if (__builtin_expect(fma_internal::g_fma_instruction, 1)) return std::fma(a, b, c);
  return fma_internal::FmaEmulatedCall(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// FmaF's two paths, for loops that choose once, outside the loop, by
// FmaFUsesInstruction() (FmaPathNow()), so that no test is left per element
// when GCC does not unswitch the loop itself (the Adam updates):
// kInstruction is std::fma (libm's fmaf in a portable build; only fast
// where FmaFUsesInstruction()), kEmulated the exact emulation. Same bits.
enum class FmaPath { kInstruction, kEmulated };

template <FmaPath kPath>
inline float FmaOn(float a, float b, float c) {
  if constexpr (kPath == FmaPath::kInstruction) {
    return std::fma(a, b, c);
  } else {
    return kernels::FmaEmulated(a, b, c);
  }
}

// Whether FmaF uses the FMA instruction (through libm's fmaf, or inlined)
// rather than the emulation on this CPU. On x86-64 without -mfma this
// follows glibc's own choice for fmaf (FMA and AVX2 usable, or FMA4; so
// GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2,-FMA4 turns both off), on
// other C libraries the CPU's FMA flag. Thread-safe.
bool FmaFUsesInstruction();

// FmaF's path now: kInstruction where FmaFUsesInstruction(). Thread-safe.
inline FmaPath FmaPathNow() {
  return FmaFUsesInstruction() ? FmaPath::kInstruction : FmaPath::kEmulated;
}

// Test seam: force the emulation (true) or restore the CPU's choice
// (false). Not safe while other threads call FmaF; the bits do not change.
void ForceFmaFEmulationForTest(bool emulate);

}  // namespace xw

#endif  // XWIRES_SRC_FMA_SCALAR_H_
