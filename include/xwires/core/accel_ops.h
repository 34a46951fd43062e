// Convolutions, dense layers and matrix products under the accelerator
// emulation (accel_numerics.h). Each takes the profile's KernelNumerics and
// an AccelSpec; with an inactive spec (!ConvActive() / !MatmulActive()) it
// is exactly the plain function (conv.h, dense.h, matmul.h), whose
// contracts (shapes, outputs, thread-safety, determinism) hold here too.
// Layers call these (trainers/layers.cc), so a profile without the
// "accelerator" object runs today's kernels untouched.
//
// Two routes:
//  * Operand rounding only (ordered accumulation, no split-K, and for the
//    filter gradient no random scatter order): the profile's own kernels
//    run on rounded operands, so the order of every reduction is today's.
//    Dense products round while the owned GEMM packs (matmul.h,
//    KernelNumerics::operands). Convolutions run on rounded x, w (kept in
//    an AccelOperandCache from the forward to the backward) and dy, each
//    rounded once per step in one vectorised pass (dgrad: dy and w; wgrad:
//    x and dy).
//  * Tensor-core accumulation or split-K (or random scatter order for the
//    filter gradient): explicit products, each output an xw::AccelDot over
//    its gathered terms, rounded while they are gathered:
//      forward  y[n,o,p]  over t = (c, kh, kw), zero where the tap reads padding;
//      dgrad   dx[n,c,h,w] over t = (o, kh', kw') with kh' = KH-1-kh,
//               kw' = KW-1-kw, zero where the tap does not reach (h, w)
//               (an implicit GEMM over the dilated dy: every one of the
//               O*KH*KW taps keeps its slot, as a GPU implicit-GEMM dgrad);
//      wgrad   dw[o,c,kh,kw] over t = (n, oh, ow); with random scatter
//               order, each image's partial is an AccelDot over its pixels
//               (split_k is not applied: the images are the partitions) and
//               the N partials are added into +0 in the order of
//               ScatterPermutation(seed, step, tensor, o*C*KH*KW + tap, N).
//    Bias is added in fp32 after the dot; db is today's BiasGradient (not
//    affected by operand rounding). The products run as one emulated GEMM
//    (src/accel/accel_gemm.h) over the kernels' own im2col of the rounded
//    sources, vectorised with Highway in exact arithmetic: the same bits as
//    the per-output AccelDot on every CPU, SIMD target and thread count
//    (each output is computed by one task, in a fixed order).
#ifndef XWIRES_CORE_ACCEL_OPS_H_
#define XWIRES_CORE_ACCEL_OPS_H_

#include <cstdint>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/conv.h"
#include "xwires/core/numerics.h"
#include "xwires/core/tensor.h"

namespace xw {

// The rounded operands of one layer's products, kept from its forward to
// the backward that follows, for the operand-rounding-only route: the
// forward rounds x and w into `x` and `w`, the backward reuses them and
// rounds only dy (into `dy`), so each operand is rounded once per step, into
// memory that is reused from step to step (no allocation, no zero fill, no
// fresh pages). The backward uses `x` and `w` only when the forward filled
// them from the same x and w storage (`x_source`, `w_source`) and `valid`
// is set, and clears `valid`; the caller must not change x or w in between
// (a training step's order: forward, backward, then the optimizer). Which
// values are rounded, and so every bit, is the same with or without it. One
// per layer; not thread-safe.
struct AccelOperandCache {
  Tensor x, w, dy;
  const float* x_source = nullptr;
  const float* w_source = nullptr;
  bool valid = false;
};

// Conv2dForward / Conv2dBackward (conv.h) under accel.conv_operands and the
// accumulation, split-K and scatter settings. `cache` (optional) keeps the
// rounded operands from the forward to the backward (above).
void AccelConv2dForward(const Tensor& x, const Tensor& w, const Tensor* bias,
                        const Conv2dSpec& spec, const KernelNumerics& num,
                        const AccelSpec& accel, Tensor* y,
                        AccelOperandCache* cache = nullptr);
void AccelConv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy,
                         const Conv2dSpec& spec, const KernelNumerics& num,
                         const AccelSpec& accel, Tensor* dx, Tensor* dw, Tensor* db,
                         AccelOperandCache* cache = nullptr);
// Matmul (matmul.h) under accel.matmul_operands, accumulation and split-K.
void AccelMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num,
                 const AccelSpec& accel);
// DenseForward / DenseBackward (dense.h) with their products on AccelMatmul
// (y = x w^T, dx = dy w, dw = dy^T x); bias added in fp32 after the
// product; db is DenseBackward's.
// With operand rounding only, the dense products round their operands
// while the GEMM packs them (KernelNumerics::operands, matmul.h): no
// rounded copies.
void AccelDenseForward(const Tensor& x, const Tensor& w, const Tensor* b,
                       const KernelNumerics& num, const AccelSpec& accel, Tensor* y);
void AccelDenseBackward(const Tensor& x, const Tensor& w, const Tensor& dy,
                        const KernelNumerics& num, const AccelSpec& accel, Tensor* dx,
                        Tensor* dw, Tensor* db);

}  // namespace xw

#endif  // XWIRES_CORE_ACCEL_OPS_H_
