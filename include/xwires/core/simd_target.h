// Which SIMD target the kernels run on.
//
// The vector kernels (ordered GEMM, convolution tiles, reductions) are
// written once on Google Highway and compiled for every SIMD target of the
// architecture (x86: AVX3 = AVX-512, AVX2, SSE4, SSSE3, and a scalar
// fallback; ARM: NEON and the fallback). At run time each call dispatches to
// the best target this CPU supports, unless restricted here, e.g. to compare
// targets on one machine (tests) or to measure another CPU class's speed
// (benchmarks). Profiles whose kernels are exact-order (every output one
// chain in the profile's defined order) give the same bits on every target.
#ifndef XWIRES_CORE_SIMD_TARGET_H_
#define XWIRES_CORE_SIMD_TARGET_H_

#include <string>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

// The target the kernels dispatch to now, by Highway's name: "AVX3", "AVX2",
// "SSE4", "NEON", "EMU128", "SCALAR", ... Thread-safe.
std::string KernelTarget();

// Float lanes of one vector on the target a kernel call dispatches to now
// (16 on AVX3, 8 on AVX2, 4 on SSE4 and NEON, 1 on SCALAR): tile shapes
// follow it; results do not.
int KernelFloatLanes();

// KernelTarget(), plus "+split" when it is AVX3 on a CPU that executes a
// 512-bit operation as two 256-bit halves (AMD Zen 4), where some kernels
// take tiles tuned for that (docs/profiles.md): the exact-order profiles'
// bits are the same, the tf profile's differ from other AVX3 CPUs'. Stored
// models' fingerprints record it as kernel_target. Thread-safe.
std::string KernelTargetVariant();

// Targets compiled into this build that this CPU can run, best first.
std::vector<std::string> KernelTargets();

// From now on, dispatch every kernel to target `name` (one of KernelTargets(),
// case-insensitive); "" restores the CPU's best. Errors name the available
// targets. Not safe while another thread runs kernels: call it between runs.
Status SetKernelTarget(const std::string& name);

// SetKernelTarget(getenv("XWIRES_SIMD_TARGET")) when that variable is set and
// not empty; OK otherwise. Programs call it once at start-up.
Status SetKernelTargetFromEnv();

}  // namespace xw

#endif  // XWIRES_CORE_SIMD_TARGET_H_
