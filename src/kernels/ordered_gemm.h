// Internal: a matrix product whose every output follows a ReduceSpec order.
//
// out(i, j) = R_t A(i, t) * B(t, j) for i < m, j < n, where R is the
// reduction xw::Dot performs for `spec` over t = 0, 1, ..., t-1 (sequential,
// pairwise tree, Kahan-Babuska, or K lanes by t mod K then folded; FMA per
// spec.fma). The result is bit-identical to calling xw::Dot per output, but
// the kernel vectorises across 32 columns and several rows at once and keeps
// each output's accumulation chain intact.
//
// Operands come from callbacks so one engine serves the owned matmul, the
// direct convolution (B = implicit im2col of x) and its backward passes:
//  * a(i0, i1, t0, t1, scratch, &ld) returns p with A(i, t) = p[(i-i0)*ld + (t-t0)]
//    for i in [i0, i1), t in [t0, t1); it may fill and return `scratch`
//    (room for (i1-i0)*(t1-t0) floats) or point into existing memory.
//  * pack_b(j0, t0, t1, dst) writes B(t, j) to dst[(t-t0)*kPanel + (j-j0)]
//    for t in [t0, t1), j in [j0, j0+kPanel), zeros for j >= n.
//  * store(i0, i1, j0, blk) receives out(i, j) at blk[(i-i0)*kPanel + (j-j0)]
//    for rows [i0, i1) and columns [j0, min(j0+kPanel, n)).
// Callbacks run concurrently from xw::ParallelFor tasks (a fixed grid of
// column panels x row groups, a function of m, n, target_tasks only) and must only write
// their own outputs.
#ifndef XWIRES_SRC_KERNELS_ORDERED_GEMM_H_
#define XWIRES_SRC_KERNELS_ORDERED_GEMM_H_

#include <cstdint>
#include <functional>

#include "xwires/core/reduce.h"

namespace xw {
namespace kernels {

inline constexpr int kPanel = 32;

struct OrderedGemmProblem {
  int64_t m = 0, n = 0, t = 0;
  std::function<const float*(int64_t i0, int64_t i1, int64_t t0, int64_t t1, float* scratch,
                             int64_t* ld)>
      a;
  std::function<void(int64_t j0, int64_t t0, int64_t t1, float* dst)> pack_b;
  std::function<void(int64_t i0, int64_t i1, int64_t j0, const float* blk)> store;
  // Optional: C itself, row-major, rows ldc floats apart, for a `store`
  // that only copies each block into it. Tasks whose block is a full panel
  // and whose sequential or lanesK chains fit one pass of terms then write
  // their rows straight into C and skip `store`; others still call it.
  float* c = nullptr;
  int64_t ldc = 0;
  // Rows are split into groups (each repacking B) only while there are fewer
  // than this many column panels; lower it when packing B is expensive.
  int64_t target_tasks = 8;
};

void RunOrderedGemm(const OrderedGemmProblem& p, const ReduceSpec& spec);

// Whether the AVX3 target takes the tiles tuned for CPUs that execute a
// 512-bit operation as two 256-bit halves (AMD Zen 4): there the 8 x 2
// tile ran unfused chains (a multiply, then an add) at 67 GFLOP/s per core
// and 256-bit 6 x 4 tiles at 88; fused chains ran 5-10% faster on 4 x 2
// tiles (a 4096 x 4096 weight gradient 42 -> 59). True on such CPUs, false
// elsewhere; XWIRES_GEMM_SPLIT_TILES=0 or 1 overrides the CPU's choice. The
// bits are the same either way (a lane is one output's chain). The
// convolutions consult it through SplitOpAvx3Dispatched below. Thread-safe.
bool SplitWideOpsTiles();

// Whether kernel calls dispatch now to AVX3 on such a CPU (the dispatched
// target has 16 float lanes and SplitWideOpsTiles()): the check before the
// convolutions call the AVX2 target's tiles there (NarrowImplicitApplies,
// ExactPatchGemm) and KernelTargetVariant's "+split". Thread-safe.
bool SplitOpAvx3Dispatched();

// 1 forces the split-op tiles, 0 the others, -1 restores the choice above
// (tests, benchmarks). Call it between kernel runs.
void SetSplitWideOpsTiles(int mode);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_ORDERED_GEMM_H_
