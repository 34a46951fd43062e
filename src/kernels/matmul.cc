#include "xwires/core/matmul.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>

#include "src/accel/round_lanes.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/gemm_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

void EigenGemm(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool accumulate) {
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  using ConstMap = Eigen::Map<const RowMat, Eigen::Unaligned, Stride>;
  if (m <= 0 || n <= 0) return;
  Eigen::Map<RowMat, Eigen::Unaligned, Stride> cm(c, m, n, Stride(ldc));
  if (k <= 0) {
    if (!accumulate) cm.setZero();
    return;
  }
  ConstMap am(a, trans_a ? k : m, trans_a ? m : k, Stride(lda));
  ConstMap bm(b, trans_b ? n : k, trans_b ? k : n, Stride(ldb));
  auto product = [&](const auto& lhs, const auto& rhs) {
    if (accumulate) {
      cm.noalias() += lhs * rhs;
    } else {
      cm.noalias() = lhs * rhs;
    }
  };
  if (trans_a && trans_b) {
    product(am.transpose(), bm.transpose());
  } else if (trans_a) {
    product(am.transpose(), bm);
  } else if (trans_b) {
    product(am, bm.transpose());
  } else {
    product(am, bm);
  }
}

}  // namespace kernels

namespace {

// dst = the rounded floats of src ([rows, cols], dst may equal src). A
// GEMM's A (the batch's activations or dy: mlp's largest is 32 x 3072)
// rounds on the calling thread: a parallel loop costs more than it saves
// there (a sync point per product, 8 more per mlp step, each waiting for
// the slower thread; under load a thread is often descheduled). Larger
// copies round in parallel chunks.
void RoundRowsOf(const float* src, float* dst, int64_t rows, int64_t cols,
                 const KernelNumerics& num) {
  constexpr int64_t kSerialFloats = int64_t{1} << 17;  // 512 KiB
  if (rows * cols <= kSerialFloats) {
    return accel::RoundLanes(src, dst, rows * cols, num.operands, num.flush_bf16_subnormals);
  }
  ParallelFor(rows, GrainFor(rows, std::max<int64_t>(1, (int64_t{1} << 14) / cols), 16),
              [&](int64_t r0, int64_t r1) {
                accel::RoundLanes(src + r0 * cols, dst + r0 * cols, (r1 - r0) * cols,
                                  num.operands, num.flush_bf16_subnormals);
              });
}

void OwnedMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num) {
  const ReduceSpec& spec = num.reduce;
  const OperandRounding rounding = num.operands;
  const bool flush = num.flush_bf16_subnormals;
  kernels::OrderedGemmProblem p;
  p.m = m;
  p.n = n;
  p.t = k;
  // op(A) row-major: A itself, or A^T transposed once for the whole product
  // (per-panel gathers would redo it for every 32 columns of C). Rounded
  // operands: A is copied (transposed or not) and rounded in the copy.
  ScratchFloats at;
  const float* arows = a;
  if (trans_a) {
    at.resize(static_cast<size_t>(m * k));
    kernels::TransposeMatrix(a, k, m, at.data());
    if (rounding != OperandRounding::kNone) RoundRowsOf(at.data(), at.data(), m, k, num);
    arows = at.data();
  } else if (rounding != OperandRounding::kNone) {
    at.resize(static_cast<size_t>(m * k));
    RoundRowsOf(a, at.data(), m, k, num);
    arows = at.data();
  }
  p.a = [=](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) -> const float* {
    *ld = k;
    return arows + i0 * k + t0;
  };
  // B's panels are rounded as they are packed, in registers between the
  // load and the store (zero padding stays zero): no second pass over them.
  p.pack_b = [=](int64_t j0, int64_t t0, int64_t t1, float* dst) {
    const int64_t cols = std::min<int64_t>(kernels::kPanel, n - j0);
    if (!trans_b) {
      if (rounding != OperandRounding::kNone) {
        accel::RoundRows(b + t0 * n + j0, n, t1 - t0, cols, dst, kernels::kPanel, rounding,
                         flush);
        if (cols < kernels::kPanel) {
          for (int64_t t = t0; t < t1; ++t) {
            float* d = dst + (t - t0) * kernels::kPanel;
            std::fill(d + cols, d + kernels::kPanel, 0.0f);
          }
        }
        return;
      }
      // Full panels copy a constant 128 bytes per row, which the compiler
      // inlines (a length known only at run time was a memmove call per
      // row: 9% of mlp's time under torch).
      for (int64_t t = t0; t < t1; ++t) {
        float* d = dst + (t - t0) * kernels::kPanel;
        if (cols == kernels::kPanel) {
          std::memcpy(d, b + t * n + j0, sizeof(float) * kernels::kPanel);
          continue;
        }
        std::copy(b + t * n + j0, b + t * n + j0 + cols, d);
        std::fill(d + cols, d + kernels::kPanel, 0.0f);
      }
      return;
    }
    // B is stored [n, k]: column j of op(B) is row j of B. A full panel is
    // a vector transpose; the last, narrower one pads with zero columns.
    if (cols == kernels::kPanel) {
      kernels::TransposeToPanelRounded(b + j0 * k + t0, k, t1 - t0, kernels::kPanel, dst,
                                       rounding, flush);
      return;
    }
    for (int64_t jj = 0; jj < kernels::kPanel; ++jj) {
      const float* src = jj < cols ? b + (j0 + jj) * k : nullptr;
      for (int64_t t = t0; t < t1; ++t) {
        dst[(t - t0) * kernels::kPanel + jj] = src ? src[t] : 0.0f;
      }
    }
    if (rounding != OperandRounding::kNone) {
      accel::RoundLanes(dst, dst, (t1 - t0) * kernels::kPanel, rounding, flush);
    }
  };
  p.store = [=](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    const int64_t cols = std::min<int64_t>(kernels::kPanel, n - j0);
    for (int64_t i = i0; i < i1; ++i) {
      const float* src = blk + (i - i0) * kernels::kPanel;
      float* dst = c + i * n + j0;
      if (accumulate) {
        for (int64_t jj = 0; jj < cols; ++jj) dst[jj] += src[jj];
      } else if (cols == kernels::kPanel) {
        std::memcpy(dst, src, sizeof(float) * kernels::kPanel);  // inlined, as in pack_b
      } else {
        std::copy(src, src + cols, dst);
      }
    }
  };
  if (!accumulate) {
    p.c = c;
    p.ldc = n;
  }
  kernels::RunOrderedGemm(p, spec);
}

void ParallelEigenMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n,
                         int64_t k, bool trans_a, bool trans_b, bool accumulate) {
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  // Bands fixed by the problem size (each band is its own sgemm), so the bits
  // never depend on the thread count. Small products stay in one band. Each
  // band packs the whole of the operand it shares with the others, so split
  // along the longer side of C, which shares the smaller operand, and into
  // few bands (4 keep 2-4 threads busy).
  const int64_t work = m * n * k;
  if (work < (int64_t{1} << 21)) {
    kernels::EigenGemm(a, lda, b, ldb, c, n, m, n, k, trans_a, trans_b, accumulate);
  } else if (m >= n) {
    ParallelFor(m, GrainFor(m, 64, 4), [&](int64_t i0, int64_t i1) {
      const float* ab = trans_a ? a + i0 : a + i0 * lda;
      kernels::EigenGemm(ab, lda, b, ldb, c + i0 * n, n, i1 - i0, n, k, trans_a, trans_b,
                         accumulate);
    });
  } else {
    ParallelFor(n, GrainFor(n, 64, 4), [&](int64_t j0, int64_t j1) {
      const float* bb = trans_b ? b + j0 * ldb : b + j0;
      kernels::EigenGemm(a, lda, bb, ldb, c + j0, n, m, j1 - j0, k, trans_a, trans_b,
                         accumulate);
    });
  }
}

}  // namespace

void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0f);
    return;
  }
  if (num.gemm == GemmKind::kEigen) {
    if (num.operands != OperandRounding::kNone) {  // Eigen packs internally: rounded copies
      ScratchFloats ar(static_cast<size_t>(m * k)), br(static_cast<size_t>(k * n));
      RoundOperands(a, ar.data(), m * k, num.operands, num.flush_bf16_subnormals);
      RoundOperands(b, br.data(), k * n, num.operands, num.flush_bf16_subnormals);
      return ParallelEigenMatmul(ar.data(), br.data(), c, m, n, k, trans_a, trans_b, accumulate);
    }
    ParallelEigenMatmul(a, b, c, m, n, k, trans_a, trans_b, accumulate);
  } else {
    OwnedMatmul(a, b, c, m, n, k, trans_a, trans_b, accumulate, num);
  }
}

}  // namespace xw
