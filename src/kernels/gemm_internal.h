// Internal: single-threaded Eigen sgemm on row-major float buffers, for
// kernels that already parallelise over independent work (images, tiles).
#ifndef XWIRES_SRC_KERNELS_GEMM_INTERNAL_H_
#define XWIRES_SRC_KERNELS_GEMM_INTERNAL_H_

#include <cstdint>

namespace xw {
namespace kernels {

// C[m, n] (+)= op(A) op(B), row-major with leading dimensions lda, ldb, ldc
// (A is [m, k] or [k, m] when trans_a; B is [k, n] or [n, k] when trans_b).
// Runs on the calling thread only (EIGEN_DONT_PARALLELIZE).
void EigenGemm(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool accumulate);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_GEMM_INTERNAL_H_
