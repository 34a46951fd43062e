// Matrix products under the accelerator emulation (accel_ops.h).
#include <algorithm>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/dense.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "src/accel/accel_gemm.h"

namespace xw {
namespace {

// The profile's kernels with the matmul operands rounded while packed.
KernelNumerics RoundingKernels(const KernelNumerics& num, const AccelSpec& s) {
  KernelNumerics r = num;
  r.operands = s.matmul_operands;
  r.flush_bf16_subnormals = s.flush_bf16_subnormals;
  return r;
}

}  // namespace

void AccelMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num,
                 const AccelSpec& accel) {
  if (!accel.MatmulActive()) return Matmul(a, b, c, m, n, k, trans_a, trans_b, accumulate, num);
  const AccelSpec s = accel.For(accel.matmul_operands);
  const OperandRounding r = s.matmul_operands;
  const bool flush = s.flush_bf16_subnormals;
  if (s.accumulation == Accumulation::kOrdered && s.split_k <= 1) {
    // Rounding only: the profile's Matmul, rounding while it packs.
    return Matmul(a, b, c, m, n, k, trans_a, trans_b, accumulate, RoundingKernels(num, s));
  }
  if (m <= 0 || n <= 0) return;
  // Rows of op(A) [m, k] and op(B) as [k, n] (the panels' layout), rounded
  // while they are packed.
  std::vector<float> rows(static_cast<size_t>(m * k)), cols(static_cast<size_t>(k * n));
  if (trans_a) {
    ParallelFor(m, GrainFor(m, 16, 16), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t t = 0; t < k; ++t) rows[i * k + t] = a[t * m + i];
      }
    });
    RoundOperands(rows.data(), rows.data(), m * k, r, flush);
  } else {
    RoundOperands(a, rows.data(), m * k, r, flush);
  }
  if (trans_b) {
    ParallelFor(k, GrainFor(k, 16, 16), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t j = 0; j < n; ++j) cols[t * n + j] = b[j * k + t];
      }
    });
    RoundOperands(cols.data(), cols.data(), k * n, r, flush);
  } else {
    RoundOperands(b, cols.data(), k * n, r, flush);
  }
  const TensorCoreSpec tc = s.TensorCoreFor(r);
  if (!accumulate) {
    return accel::AccelGemm(rows.data(), k, cols.data(), n, c, n, m, n, k, s, tc, num.reduce,
                            true);
  }
  std::vector<float> d(static_cast<size_t>(m * n));
  accel::AccelGemm(rows.data(), k, cols.data(), n, d.data(), n, m, n, k, s, tc, num.reduce, true);
  for (int64_t i = 0; i < m * n; ++i) c[i] = c[i] + d[i];
}

void AccelDenseForward(const Tensor& x, const Tensor& w, const Tensor* b,
                       const KernelNumerics& num, const AccelSpec& accel, Tensor* y) {
  if (!accel.MatmulActive()) return DenseForward(x, w, b, num, y);
  const AccelSpec s = accel.For(accel.matmul_operands);
  if (s.accumulation == Accumulation::kOrdered && s.split_k <= 1) {
    // Rounding only: today's dense kernel, rounding while it packs.
    return DenseForward(x, w, b, RoundingKernels(num, s), y);
  }
  const int64_t rows = x.dim(0), out = w.dim(0), in = w.dim(1);
  if (rows * in != x.size()) {  // DenseForward's shape message
    return DenseForward(x, w, b, num, y);
  }
  y->Resize({rows, out});
  AccelMatmul(x.data(), w.data(), y->data(), rows, out, in, false, true, false, num, accel);
  if (b == nullptr) return;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < out; ++j) y->data()[i * out + j] += (*b)[j];
  }
}

void AccelDenseBackward(const Tensor& x, const Tensor& w, const Tensor& dy,
                        const KernelNumerics& num, const AccelSpec& accel, Tensor* dx,
                        Tensor* dw, Tensor* db) {
  if (!accel.MatmulActive()) return DenseBackward(x, w, dy, num, dx, dw, db);
  const AccelSpec s = accel.For(accel.matmul_operands);
  if (s.accumulation == Accumulation::kOrdered && s.split_k <= 1) {
    // db sums the unrounded dy (Matmul rounds only its own operands).
    return DenseBackward(x, w, dy, RoundingKernels(num, s), dx, dw, db);
  }
  if (db != nullptr) DenseBackward(x, w, dy, num, nullptr, nullptr, db);
  const int64_t rows = dy.dim(0), out = w.dim(0), in = w.dim(1);
  if (dx != nullptr) {
    dx->Resize(x.shape());
    AccelMatmul(dy.data(), w.data(), dx->data(), rows, in, out, false, false, false, num, accel);
  }
  if (dw != nullptr) {
    dw->Resize(w.shape());
    AccelMatmul(dy.data(), x.data(), dw->data(), out, in, rows, true, false, false, num, accel);
  }
}

}  // namespace xw
