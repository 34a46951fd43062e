// Internal: the emulated accelerator product as a GEMM, shared by the
// convolutions and matrix products of accel_ops.h.
//
// C[i, j] = AccelDot(row i of A, column j of B, k, spec, tc, reduce) for
// every i < m, j < n (accel_numerics.h): the same bits as that scalar
// definition, on every SIMD target and thread count. A is row-major
// (a[i * lda + t]) and B is k-major (b[t * ldb + j]), the layout im2col
// writes, so the columns of a patch matrix are B's columns as they are.
// Operands are used as given: the callers round them while they pack
// (RoundOperands on the packed rows, or on the image im2col reads).
//
// Tensor-core accumulation runs on panels (Highway, dispatched per CPU):
// 16 outputs of one row of C per panel, one lane each; per block FMA the
// exact products, the largest magnitude's exponent, truncation onto the
// block's grid by an exact power of two, an exact integer sum and rounding
// toward zero to fp32. Every step is exact, so the lane width cannot change
// a bit. Where F32PanelApplies (reduced operands whose products stay in
// fp32's normal range: what the profiles' rounded operands give unless a
// gradient underflows past 2^-50 or so) the panels run on float lanes with
// int32 sums: TensorCorePanelBlocks (tc_block_tiles.cc) for the presets'
// block sizes, TensorCorePanelF32 (accel_tiles.cc) for the others; else
// TensorCorePanel on double lanes, where a lane that meets a value outside
// what the exact steps cover (Inf/NaN, a result in fp32's subnormal range)
// is recomputed by the scalar definition. A task packs each chunk of its
// panel of row-major B contiguous (B's rows are often a power of two apart)
// and runs up to 64 rows through it; B in panel layout (PanelB, what the
// convolutions' gathers and the dense products' transposes write) is read
// as it is.
// Ordered accumulation (used with split-K) runs xw::Dot per output.
//
// Thread-safety: pure functions of their arguments; `parallel` runs tiles
// through xw::ParallelFor (each output is computed by one task in a fixed
// order, so the thread count cannot change a bit).
#ifndef XWIRES_SRC_ACCEL_ACCEL_GEMM_H_
#define XWIRES_SRC_ACCEL_ACCEL_GEMM_H_

#include <cstdint>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/reduce.h"

namespace xw {
namespace accel {

// Outputs per panel (fixed, so the panels, not the lanes, are the unit of
// work on every target).
inline constexpr int64_t kPanel = 16;

void AccelGemm(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t m, int64_t n, int64_t k, const AccelSpec& spec, const TensorCoreSpec& tc,
               const ReduceSpec& reduce, bool parallel);

// Where B's columns lie: column j's term t is
// b[(j / kPanel) * panel_stride + t * ld + j % kPanel]. Row-major B (the
// overload above) is {b, ldb, kPanel}; the panel layout {b, kPanel, stride}
// holds each panel of kPanel columns as its own k-major block of kPanel
// floats per term (what the convolutions' gathers write, so the GEMM reads
// its panels as they are, without packing), the last panel's missing
// columns zero.
struct PanelB {
  const float* b;
  int64_t ld;
  int64_t panel_stride;
  bool Panels() const { return ld == kPanel && panel_stride != kPanel; }
};
struct OperandRange;
// ranges (optional): OperandRange bounds of A's and of B's values, from a
// cheaper pass than over the operands themselves (the image a patch
// matrix gathers from). Bounds over a superset of the values are fine: the
// float panels then apply less often, never with other bits (every panel
// gives the scalar definition's bits).
struct GemmRanges;
void AccelGemm(const float* a, int64_t lda, const PanelB& b, float* c, int64_t ldc, int64_t m,
               int64_t n, int64_t k, const AccelSpec& spec, const TensorCoreSpec& tc,
               const ReduceSpec& reduce, bool parallel, const GemmRanges* ranges = nullptr);

// One panel of tensor-core block FMAs (accel_tiles.cc): for rows r < rows
// and lanes j < kPanel, acc[r * kPanel + j] (an fp32 value held in a
// double) goes through the kk terms a[r * lda + t] * b[t * ldb + j], blocks
// of tc.block from t = 0. bad[r] is set when a lane of row r met a value
// the exact vector steps do not cover; the row must then be recomputed.
// b must have kPanel readable floats per term.
void TensorCorePanel(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                     int64_t kk, const TensorCoreSpec& tc, double* acc, bool* bad);

// The float panels' conditions. On the spec: the block's integer sum stays
// below 2^31 - 2^7, i.e. (block + 1) * 2^(24 + align_bits) does. On the
// operands (OperandRange of A and of B): every value is zero or a normal
// float with at most 12 significant bits (TF32, bf16, fp16 values, whose
// products are exact in fp32); every nonzero product is at least
// 2^(align_bits - 103) (min_nonzero of A times that of B); and k times the
// largest product stays below 2^126 (no product or accumulator overflows).
struct OperandRange {
  bool reduced = false;     // zeros and normal floats of <= 12 significant bits
  float min_nonzero = 0;    // smallest nonzero magnitude (0: all zero)
  float max_abs = 0;        // largest magnitude
};
// The range of the values of both (a superset's range).
OperandRange MergeRanges(const OperandRange& x, const OperandRange& y);
struct GemmRanges {
  OperandRange a, b;
};
bool F32PanelSpec(const TensorCoreSpec& tc);
OperandRange F32PanelRange(const float* x, int64_t rows, int64_t cols, int64_t ld);
bool F32PanelApplies(const TensorCoreSpec& tc, const OperandRange& a, const OperandRange& b,
                     int64_t k);
void TensorCorePanelF32(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                        int64_t kk, const TensorCoreSpec& tc, float* acc, bool* bad);

// TensorCorePanelF32 for the presets' block sizes (4, 8, 16) and vectors of
// at least 4 floats (tc_block_tiles.cc), same bits; false (acc untouched)
// where it does not apply.
bool TensorCorePanelBlocks(const float* a, int64_t lda, const float* b, int64_t ldb,
                           int64_t rows, int64_t kk, const TensorCoreSpec& tc, float* acc);

}  // namespace accel
}  // namespace xw

#endif  // XWIRES_SRC_ACCEL_ACCEL_GEMM_H_
