// The exact-order GEMM (ordered_gemm.h) on Highway: one source, compiled for
// every SIMD target and dispatched at run time. A lane of a vector is one
// output column's accumulation chain, so the target's width decides only how
// many columns advance per instruction; every output's bits are those of
// xw::Dot over its terms on every target.
#include <algorithm>
#include <vector>

#include "src/kernels/ordered_gemm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"
#include "src/scratch_floats.h"
#include "xwires/core/tensor.h"

#ifndef XWIRES_ORDERED_GEMM_SHARED_
#define XWIRES_ORDERED_GEMM_SHARED_
namespace xw {
namespace kernels {
namespace ogemm {

// Terms packed at once by Kahan and pairwise products (and the row groups
// below): 256 x 32 floats = 32 KiB of B, reused by every row tile while it
// is in L1.
constexpr int64_t kChunk = 256;

// Terms per pass of a sequential or lanesK product (Task::Lanes; products
// of at most this many fold each row tile's chains in registers). Its row
// tiles read the packed B a lane's rows at a time, so B streams from L2
// whatever the chunk: 256-term passes (32 KiB of B, which with A and the
// chains overflowed Zen 4's 32 KiB L1 anyway) only stored and reloaded
// every chain tile four times as often. On the AVX2 target of an AMD EPYC
// Zen 4 (2026-11-27, a2c598d), one thread: mlp's 3072-term forward under
// lanes8 91.0 -> 97.6 GFLOP/s, 512^3 97.2 -> 104.2; mlp's torch step about
// +9%. A multiple of 16, so lanesK chains (K | 16) restart at lane 0 in
// every pass.
constexpr int64_t kLanesChunk = 1024;

// Per-thread buffers, grown on demand and kept for the next call (shared by
// every target's code).
struct Scratch {
  ScratchFloats bpack, apack, state, out, right;
};
inline Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}
inline float* Grow(ScratchFloats& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
  return v.data();
}

}  // namespace ogemm
}  // namespace kernels
}  // namespace xw
#endif  // XWIRES_ORDERED_GEMM_SHARED_

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/ordered_gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
// The tile engine at the target's full width and, on AVX3, the tiles for
// CPUs that split 512-bit operations (SplitWideOpsTiles, ordered_gemm.h):
// fused chains on 4 rows x 2 vectors, unfused ones on 256-bit vectors, 6 x
// 4. The same bits whichever runs.
namespace full {
constexpr int kLanes = HWY_LANES(float);
constexpr int kMaxRows = 8;
#include "src/kernels/ordered_gemm-inl.h"
}  // namespace full
#if HWY_TARGET == HWY_AVX3
namespace split_fused {
constexpr int kLanes = HWY_LANES(float);
constexpr int kMaxRows = 4;
#include "src/kernels/ordered_gemm-inl.h"
}  // namespace split_fused
namespace split_unfused {
constexpr int kLanes = 8;
// 7 rows (28 accumulators) measured 7% slower on Zen 4.
constexpr int kMaxRows = 6;
#include "src/kernels/ordered_gemm-inl.h"
}  // namespace split_unfused
#endif

void RunTask(const OrderedGemmProblem& p, const ReduceSpec& spec, int64_t i0, int64_t i1,
             int64_t j0) {
#if HWY_TARGET == HWY_AVX3
  if (SplitWideOpsTiles()) {
    if (spec.fma) return split_fused::RunTaskAtWidth(p, spec, i0, i1, j0);
    return split_unfused::RunTaskAtWidth(p, spec, i0, i1, j0);
  }
#endif
  full::RunTaskAtWidth(p, spec, i0, i1, j0);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <atomic>
#include <cstdlib>
#include <cstring>
#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace xw {
namespace kernels {
namespace {

// AMD family 0x19 with AVX-512 is Zen 4, whose cores execute a 512-bit
// operation as two 256-bit halves (Zen 3, the same family, has no AVX-512
// and never dispatches to AVX3).
bool CpuSplitsWideOps() {
#if HWY_ARCH_X86
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::strcmp(vendor, "AuthenticAMD") != 0) return false;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  unsigned family = (eax >> 8) & 0xF;
  if (family == 0xF) family += (eax >> 20) & 0xFF;
  return family == 0x19;
#else
  return false;
#endif
}

int DefaultSplitTiles() {
  const char* v = std::getenv("XWIRES_GEMM_SPLIT_TILES");
  if (v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0)) {
    return v[0] == '1';
  }
  return CpuSplitsWideOps();
}

std::atomic<int> g_split_tiles{-1};

}  // namespace

bool SplitWideOpsTiles() {
  const int forced = g_split_tiles.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  static const bool by_cpu = DefaultSplitTiles();
  return by_cpu;
}

bool SplitOpAvx3Dispatched() { return KernelFloatLanes() == 16 && SplitWideOpsTiles(); }

void SetSplitWideOpsTiles(int mode) {
  g_split_tiles.store(mode < 0 ? -1 : (mode > 0 ? 1 : 0), std::memory_order_relaxed);
}

HWY_EXPORT(RunTask);

void RunOrderedGemm(const OrderedGemmProblem& p, const ReduceSpec& spec) {
  if (p.m <= 0 || p.n <= 0) return;
  // Row groups are multiples of 8 rows whatever the target's tile height, so
  // the grid is the same on every target; a row's bits never depend on which
  // task or tile computes it.
  constexpr int64_t kGroupRound = 8;
  constexpr int64_t kCachedA = 64 * 1024;  // floats of A per group: 256 KiB
  const int64_t panels = (p.n + kPanel - 1) / kPanel;
  const int64_t max_groups = (p.m + kGroupRound - 1) / kGroupRound;
  const int64_t target = std::max<int64_t>(1, p.target_tasks);
  int64_t groups = std::clamp<int64_t>((target + panels - 1) / panels, 1, max_groups);
  // With one chunk of terms a task reads its group's rows of A whole for
  // its one column panel, so every panel streams the group's A again (VGG's
  // 4096-row weight gradients, 128 terms: 2 MiB of A per panel). Groups of
  // at most kCachedA floats of A stay in L2, and the tasks then go group by
  // group (consecutive tasks, which ParallelFor gives one thread, share A).
  // Measured on Zen 4 at two threads: the 4096 x 512 weight gradient 51-64
  // -> 64-68 GFLOP/s per CPU-second under lanes8 and 59-71 -> 72-75
  // sequential; 4096 x 4096 within 4%, and one thread unchanged.
  const bool by_group = p.t <= ogemm::kChunk && p.m * p.t > kCachedA;
  if (by_group) groups = std::clamp<int64_t>((p.m * p.t + kCachedA - 1) / kCachedA, groups,
                                             max_groups);
  const int64_t group_rows =
      ((p.m + groups - 1) / groups + kGroupRound - 1) / kGroupRound * kGroupRound;
  const int64_t ngroups = (p.m + group_rows - 1) / group_rows;
  ParallelFor(panels * ngroups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t g = by_group ? task / panels : task % ngroups;
      const int64_t j0 = (by_group ? task % panels : task / ngroups) * kPanel;
      const int64_t i0 = g * group_rows, i1 = std::min(p.m, i0 + group_rows);
      HWY_DYNAMIC_DISPATCH(RunTask)(p, spec, i0, i1, j0);
    }
  });
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
