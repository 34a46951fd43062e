#include "xwires/core/dense.h"

#include <string>

#include "src/kernels/conv_internal.h"
#include "src/scratch_floats.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"
#include "xwires/core/status.h"

namespace xw {

namespace {

// Rows and features of x ([N, in] or [N, ...] flattened), checked against w.
void CheckShapes(const Tensor& x, const Tensor& w, const Tensor* b, int64_t* rows,
                 int64_t* in) {
  if (x.rank() < 2 || w.rank() != 2) {
    DieWithStatus(Status::InvalidArgument("dense: x " + ShapeToString(x.shape()) + " and w " +
                                          ShapeToString(w.shape()) +
                                          " must have rank >= 2 and rank 2"));
  }
  *rows = x.dim(0);
  *in = *rows > 0 ? x.size() / *rows : 0;
  if (*in != w.dim(1)) {
    DieWithStatus(Status::InvalidArgument("dense: x " + ShapeToString(x.shape()) + " has " +
                                          std::to_string(*in) + " features per row, w " +
                                          ShapeToString(w.shape()) + " expects " +
                                          std::to_string(w.dim(1))));
  }
  if (b != nullptr && (b->rank() != 1 || b->dim(0) != w.dim(0))) {
    DieWithStatus(Status::InvalidArgument("dense: bias " + ShapeToString(b->shape()) +
                                          " does not match w " + ShapeToString(w.shape())));
  }
}

}  // namespace

void DenseForward(const Tensor& x, const Tensor& w, const Tensor* b, const KernelNumerics& num,
                  Tensor* y) {
  int64_t rows, in;
  CheckShapes(x, w, b, &rows, &in);
  const int64_t out = w.dim(0);
  y->Resize({rows, out});
  Matmul(x.data(), w.data(), y->data(), rows, out, in, /*trans_a=*/false, /*trans_b=*/true,
         /*accumulate=*/false, num);
  if (b == nullptr) return;
  for (int64_t i = 0; i < rows; ++i) {
    float* yr = y->data() + i * out;
    for (int64_t j = 0; j < out; ++j) yr[j] += (*b)[j];
  }
}

void DenseBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const KernelNumerics& num,
                   Tensor* dx, Tensor* dw, Tensor* db) {
  int64_t rows, in;
  CheckShapes(x, w, nullptr, &rows, &in);
  const int64_t out = w.dim(0);
  if (dy.shape() != Shape{rows, out}) {
    DieWithStatus(Status::InvalidArgument("dense: dy " + ShapeToString(dy.shape()) +
                                          " does not match y [" + std::to_string(rows) + ", " +
                                          std::to_string(out) + "]"));
  }
  if (dx != nullptr) {
    dx->Resize(x.shape());
    Matmul(dy.data(), w.data(), dx->data(), rows, in, out, false, false, false, num);
  }
  if (dw != nullptr) dw->Resize(w.shape());
  if (db != nullptr) db->Resize({out});
  if (dw == nullptr && db == nullptr) return;
  if (rows == 0) {  // sums of no terms
    if (dw != nullptr) dw->Fill(0.0f);
    if (db != nullptr) db->Fill(0.0f);
    return;
  }
  // dy transposed once, [out, rows]: each bias sum then reads its terms one
  // float apart instead of `out` apart (the same terms in the same order, so
  // the same bits; the strided sums were 2% of mlp's step on AVX2), and the
  // owned GEMM takes it as its A instead of transposing dy itself. Eigen's
  // weight gradient reads dy as it is, so without a bias it needs none.
  const bool owned = num.gemm == GemmKind::kOwned;
  ScratchFloats dyt;
  if (db != nullptr || owned) {
    dyt.resize(rows * out);
    kernels::TransposeMatrix(dy.data(), rows, out, dyt.data());
  }
  if (dw != nullptr) {
    if (owned) {
      Matmul(dyt.data(), x.data(), dw->data(), out, in, rows, false, false, false, num);
    } else {
      Matmul(dy.data(), x.data(), dw->data(), out, in, rows, /*trans_a=*/true, false, false,
             num);
    }
  }
  if (db != nullptr) {
    ParallelFor(out, GrainFor(out, 16, 8), [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j) (*db)[j] = Sum(dyt.data() + j * rows, rows, num.reduce);
    });
  }
}

}  // namespace xw
