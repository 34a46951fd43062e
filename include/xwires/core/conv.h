// 2-D convolution (cross-correlation, as PyTorch and TensorFlow compute it),
// forward and backward, in three algorithms selected by
// KernelNumerics::conv_algo. The algorithms compute the same mathematical
// function but round differently; which one runs is a numerics knob.
//
// Layouts: x [N, C, H, W] (NCHW), w [O, C, KH, KW] (OIHW), bias [O],
// y [N, O, OH, OW]. All float32.
//
// Algorithms (forward and backward live side by side in src/kernels/conv_*.cc):
//  * kDirect: every output y[n,o,oh,ow] = R(terms) + bias[o], where R reduces
//    the C*KH*KW terms x[n,c,ih,iw] * w[o,c,kh,kw] in index order
//    t = (c*KH + kh)*KW + kw exactly as xw::Dot does with num.reduce
//    (sequential / pairwise / Kahan / K-lane partials; FMA per num.reduce.fma).
//    Taps that fall in the padding are zero terms: they keep their index t
//    (so K-lane assignment is t mod K, as over a zero-padded patch) and leave
//    the accumulator unchanged. The result equals xw::Dot over the
//    zero-padded im2col patch, bias added once after the reduction.
//    dx is the transposed convolution: dy correlated with the spatially
//    flipped, channel-transposed kernel. dx[n,c,h,w] reduces the terms
//    dy[n,o,oh,ow] * w[o,c,kh,kw] over (o, kh', kw') in index order, with
//    kh' = KH-1-kh, kw' = KW-1-kw, restricted to the taps whose phase can
//    reach (h, w) ((h + pad_top - kh) divisible by the stride, likewise for
//    w; with stride 1 all O*KH*KW taps); dy positions outside the output are
//    zero terms. Each stride phase runs as its own stride-1 convolution, so
//    no work is spent on the zeros a dilated dy would contain.
//    dw[o,c,kh,kw] reduces its N*OH*OW terms dy[n,o,oh,ow] * x[n,c,ih,iw] in
//    (n, oh, ow) order, per num.reduce (padded taps as zero terms).
//    Vectorised across 32 outputs at a time with each output's accumulation
//    chain kept intact (src/kernels/ordered_gemm.h); zero terms differ from
//    skipped ones only when a weight is Inf/NaN (0 * Inf = NaN).
//  * kIm2colGemm: patch matrix [C*KH*KW, k*OH*OW] of k images (k fixed by
//    the plane size, ~512 GEMM columns) times the weight matrix on Eigen's
//    blocked sgemm (TensorFlow's SpatialConvolution scheme); 1x1 stride-1
//    unpadded convolutions use x directly. dx = col2im(W^T dY), the patch
//    gradients scattered back tap by tap. dw = dY X^T: up to 4 fixed groups
//    of those image batches each accumulate their GEMMs in batch order, then
//    the group partials are added in group order. The GEMMs ignore num.reduce
//    (Eigen's ISA-dependent order); num.gemm is not consulted.
//  * kWinograd: F(2x2, 3x3) (Lavin & Gray 2016) for 3x3 stride-1 kernels with
//    any padding; the 16 element-wise channel reductions run on Eigen's sgemm.
//    dx is the Winograd convolution of dy with the flipped, transposed kernel
//    (when every pad is <= 2, else im2col); dw uses the im2col GEMM. Any other
//    shape falls back to kIm2colGemm (EffectiveConvAlgo tells which runs).
// kDirect always uses our ordered kernels (num.gemm is not consulted).
// For every algorithm, db[o] = xw::Sum over (n, oh, ow) of dy with num.reduce.
//
// Determinism: work is split with xw::ParallelFor into chunks fixed by the
// problem size, and every output is produced by one chunk, so results are
// bitwise identical for any thread count. Functions are thread-safe for
// distinct output tensors (they use thread-local scratch).
//
// Errors: shape mismatches are programming errors (callers validate once with
// MakeConvGeometry, e.g. when a layer is built); the compute functions abort
// with the MakeConvGeometry message if given inconsistent shapes.
#ifndef XWIRES_CORE_CONV_H_
#define XWIRES_CORE_CONV_H_

#include <cstdint>

#include "xwires/core/numerics.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

enum class PadMode {
  // Symmetric `pad` on every side (PyTorch): out = (in + 2*pad - k) / stride + 1.
  kExplicit,
  // TensorFlow 'SAME': out = ceil(in / stride),
  // pad_total = max((out - 1) * stride + k - in, 0), before = total / 2,
  // after = total - before (the extra pixel goes to the bottom / right).
  kSame,
};

struct Conv2dSpec {
  int kernel_h = 3, kernel_w = 3;  // must match w's KH, KW
  int stride = 1;                  // >= 1, same in both dimensions
  int pad = 0;                     // kExplicit only, >= 0
  PadMode pad_mode = PadMode::kExplicit;
};

// Everything a kernel needs about one convolution's shapes. pad_bottom and
// pad_right are the declared padding (PyTorch: pad; TF SAME: the "after"
// part); when the stride does not reach the last input rows/columns they are
// simply not read.
struct ConvGeometry {
  int64_t n, c, h, w;  // input
  int64_t o, oh, ow;   // output channels and size
  int kh, kw, stride;
  int pad_top, pad_left, pad_bottom, pad_right;

  // Multiply-adds of the forward pass: n*o*oh*ow*c*kh*kw.
  int64_t Macs() const { return n * o * oh * ow * c * kh * kw; }
};

// Validates shapes and computes the output size and padding. Errors name the
// offending dimension: rank != 4, x channels != w input channels, kernel size
// != spec, stride < 1, negative pad, or an empty output.
Result<ConvGeometry> MakeConvGeometry(const Shape& x, const Shape& w, const Conv2dSpec& spec);

// The algorithm that actually runs for `requested` (kWinograd falls back to
// kIm2colGemm unless the kernel is 3x3 with stride 1).
ConvAlgo EffectiveConvAlgo(const ConvGeometry& g, ConvAlgo requested);

// y = conv(x, w) + bias. y is resized to [N, O, OH, OW] (its buffer is kept
// when the shape already matches). bias ([O]) may be null. x, w, bias must
// not alias y.
void Conv2dForward(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dSpec& spec,
                   const KernelNumerics& num, Tensor* y);

// Gradients of L with respect to x, w and bias given dy = dL/dy
// ([N, O, OH, OW]). Each of dx ([N,C,H,W]), dw ([O,C,KH,KW]), db ([O]) may be
// null to skip it; the others are resized and overwritten (not accumulated).
void Conv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const Conv2dSpec& spec,
                    const KernelNumerics& num, Tensor* dx, Tensor* dw, Tensor* db);

}  // namespace xw

#endif  // XWIRES_CORE_CONV_H_
