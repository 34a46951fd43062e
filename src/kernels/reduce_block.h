// Internal: reduce.cc's pairwise tree over one 256-term block, on the
// dispatched SIMD target (reduce_block.cc). The tree below a 256-term range
// is always the same: 32 leaves of 8 consecutive terms, each summed in
// order from zero, then a perfect binary tree over the leaves in order. The
// bits are those of the scalar tree on every target.
#ifndef XWIRES_SRC_KERNELS_REDUCE_BLOCK_H_
#define XWIRES_SRC_KERNELS_REDUCE_BLOCK_H_

namespace xw {
namespace kernels {

inline constexpr long kPairwiseBlock = 256;

// Pairwise sum of the 256 terms a[i] - sa.
float PairwiseBlockSum(const float* a, float sa);
// Pairwise sum of the 256 terms (a[i] - sa) * (b[i] - sb), one rounding per
// term with fma, else a rounded product then a rounded add.
float PairwiseBlockDot(const float* a, float sa, const float* b, float sb, bool fma);
// Both PairwiseBlockSum(b, sb) and PairwiseBlockDot(a, sa, b, sb, fma), each
// bit for bit, reading b once.
void PairwiseBlockSumDot(const float* a, float sa, const float* b, float sb, bool fma,
                         float* sum_b, float* dot);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_REDUCE_BLOCK_H_
