// Fully connected (dense / linear) layer kernels, PyTorch layout.
//
// x [N, in], w [out, in], b [out], y [N, out]:   y = x w^T + b.
// x may also have rank > 2 (e.g. [N, C, H, W]); its trailing dimensions are
// flattened to `in` (dx then gets x's shape).
// The products run on xw::Matmul with num (num.gemm and num.reduce apply);
// the bias is added once after each dot product. db[j] = xw::Sum over the
// batch of dy[:, j] with num.reduce.
//
// Deterministic for any thread count; thread-safe for distinct outputs.
// Shape mismatches are programming errors: the functions abort with a message
// naming the shapes (layers validate their shapes when built).
#ifndef XWIRES_CORE_DENSE_H_
#define XWIRES_CORE_DENSE_H_

#include "xwires/core/numerics.h"
#include "xwires/core/tensor.h"

namespace xw {

// y is resized to [N, out]; b ([out]) may be null. Inputs must not alias y.
void DenseForward(const Tensor& x, const Tensor& w, const Tensor* b, const KernelNumerics& num,
                  Tensor* y);

// Given dy = dL/dy [N, out]: dx = dy w ([N, in]), dw = dy^T x ([out, in]),
// db = column sums of dy ([out]). Any output may be null (skipped); the
// others are resized and overwritten, not accumulated.
void DenseBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const KernelNumerics& num,
                   Tensor* dx, Tensor* dw, Tensor* db);

}  // namespace xw

#endif  // XWIRES_CORE_DENSE_H_
