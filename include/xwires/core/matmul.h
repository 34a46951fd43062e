// Dense single-precision matrix product with a selectable numerics kind.
//
// C[M, N] = op(A) * op(B)  (or C += ..., when accumulate), all row-major:
//   A is [M, K] (or [K, M] when trans_a, so op(A) = A^T),
//   B is [K, N] (or [N, K] when trans_b),
//   C is [M, N].
//
// num.gemm selects the arithmetic:
//  * GemmKind::kOwned: every C[i, j] is exactly
//      xw::Dot(row i of op(A), column j of op(B), K, num.reduce)
//    (sequential / pairwise / Kahan / K-lane order, FMA per num.reduce.fma),
//    computed by a blocked, vectorised kernel that keeps that per-element
//    order; with accumulate, C[i, j] = C[i, j] + Dot(...) (one rounded add).
//  * GemmKind::kEigen: Eigen's blocked sgemm (its own ISA-dependent order);
//    accumulate uses Eigen's C += A * B.
//
// With num.operands other than kNone, both operands are rounded per
// RoundOperand before the product (the bits of the same product on rounded
// copies): the owned kernel rounds them while it packs them (each packed B
// panel, and A as it copies it), Eigen on rounded copies.
//
// Work is split with xw::ParallelFor into row/column tiles fixed by (M, N, K),
// so results are bitwise identical for any thread count. Thread-safe for
// distinct C. A, B and C must not overlap. M, N or K == 0 is allowed (K == 0
// gives zeros, or leaves C unchanged with accumulate).
#ifndef XWIRES_CORE_MATMUL_H_
#define XWIRES_CORE_MATMUL_H_

#include <cstdint>

#include "xwires/core/numerics.h"

namespace xw {

void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num);

}  // namespace xw

#endif  // XWIRES_CORE_MATMUL_H_
