// FmaF's run-time choice (fma_scalar.h): the FMA instruction where libm's
// fmaf is the instruction, else the exact emulation.
#include "src/fma_scalar.h"

#if XW_FMAF_RUNTIME && defined(__GLIBC__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>  // glibc >= 2.33: the features its ifuncs use
#define XW_FMAF_GLIBC_FEATURES 1
#else
#define XW_FMAF_GLIBC_FEATURES 0
#endif

namespace xw {
namespace {

bool LibmFmafIsInstruction() {
#if !XW_FMAF_RUNTIME
  return true;  // std::fma is inlined as the instruction
#elif XW_FMAF_GLIBC_FEATURES
  // glibc's fmaf ifunc selector (sysdeps/x86_64/fpu/multiarch/ifunc-fma4.h):
  // FMA with AVX2, or FMA4, else the generic software fmaf. "Active" are the
  // features glibc uses after GLIBC_TUNABLES.
  return (CPU_FEATURE_ACTIVE(FMA) && CPU_FEATURE_ACTIVE(AVX2)) || CPU_FEATURE_ACTIVE(FMA4);
#else
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma");
#endif
}

}  // namespace

namespace fma_internal {
bool g_fma_instruction = LibmFmafIsInstruction();

float FmaEmulatedCall(float a, float b, float c) { return kernels::FmaEmulated(a, b, c); }

}  // namespace fma_internal

bool FmaFUsesInstruction() { return fma_internal::g_fma_instruction; }

void ForceFmaFEmulationForTest(bool emulate) {
  fma_internal::g_fma_instruction = !emulate && LibmFmafIsInstruction();
}

}  // namespace xw
