// Matrix products under the accelerator emulation (accel_ops.h).
#include <algorithm>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/dense.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "src/accel/accel_gemm.h"
#include "src/accel/accel_patches.h"
#include "src/kernels/conv_internal.h"
#include "src/scratch_floats.h"

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
  // Rows of op(A) [m, k] and op(B) as [k, n] in the GEMM's panel layout
  // (accel_gemm.h, PanelB: read as they are, no packing per chunk), both
  // transposed by vector kernels where needed and rounded in one pass.
  ScratchFloats rows(static_cast<size_t>(m * k));
  if (trans_a) {
    kernels::TransposeMatrix(a, k, m, rows.data());
    RoundOperands(rows.data(), rows.data(), m * k, r, flush);
  } else {
    RoundOperands(a, rows.data(), m * k, r, flush);
  }
  const int64_t panels = (n + accel::kPanel - 1) / accel::kPanel, stride = k * accel::kPanel;
  ScratchFloats cols(static_cast<size_t>(accel::PanelFloats(k, n)));
  ParallelFor(panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t j0 = p * accel::kPanel, width = std::min(accel::kPanel, n - j0);
      float* dst = cols.data() + p * stride;
      if (trans_b) {  // b [n, k]: column j of op(B) is row j of b
        accel::TransposeToPanels(b + j0 * k, k, k, width, stride, dst);
        continue;
      }
      for (int64_t t = 0; t < k; ++t) {
        std::copy_n(b + t * n + j0, width, dst + t * accel::kPanel);
        std::fill(dst + t * accel::kPanel + width, dst + (t + 1) * accel::kPanel, 0.0f);
      }
    }
  });
  RoundOperands(cols.data(), cols.data(), accel::PanelFloats(k, n), r, flush);
  const accel::PanelB pb{cols.data(), accel::kPanel, stride};
  const TensorCoreSpec tc = s.TensorCoreFor(r);
  if (!accumulate) {
    return accel::AccelGemm(rows.data(), k, pb, c, n, m, n, k, s, tc, num.reduce, true);
  }
  ScratchFloats d(static_cast<size_t>(m * n));
  accel::AccelGemm(rows.data(), k, pb, d.data(), n, m, n, k, s, tc, num.reduce, true);
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
