// Internal: the per-algorithm convolution entry points behind conv.h and the
// patch-gathering helpers they share. All pointers are dense NCHW / OIHW
// buffers of the sizes `g` implies; outputs are fully overwritten.
#ifndef XWIRES_SRC_KERNELS_CONV_INTERNAL_H_
#define XWIRES_SRC_KERNELS_CONV_INTERNAL_H_

#include <cstdint>

#include "xwires/core/conv.h"
#include "xwires/core/reduce.h"

namespace xw {
namespace kernels {

// Where the taps of a convolution read from. Tap (a, b) of output (p, q)
// reads virtual coordinate (u, v) = (p*stride + a - pad_top,
// q*stride + b - pad_left); the virtual grid is the source dilated by `dil`
// (u maps to source row u / dil when u % dil == 0), and everything outside the
// source is zero padding. The forward pass reads x with dil = 1; the data
// gradient reads dy dilated by the forward stride with stride 1.
struct TapSource {
  const float* data;       // [images, channels, h, w]
  int64_t channels, h, w;  // source extents
  int dil;
  int kh, kw, stride, pad_top, pad_left;
  int64_t oh, ow;  // output grid the taps are evaluated on

  const float* Plane(int64_t n, int64_t c) const { return data + (n * channels + c) * h * w; }
};

// dst[k * ds] = tap (a, b) of plane `plane` at outputs (p, q0 + k), k < len,
// zero where the tap falls in the padding (or between dilated samples).
void GatherTapRun(const TapSource& s, const float* plane, int a, int b, int64_t p, int64_t q0,
                  int64_t len, float* dst, int64_t ds);

// cols[t * OH*OW + p * OW + q] for t = (c*KH + a)*KW + b: the zero-padded
// patch matrix of one image of s (im2col).
void Im2colImage(const TapSource& s, int64_t n, float* cols);

TapSource ForwardSource(const ConvGeometry& g, const float* x);

// kDirect (conv_direct.cc): every output reduces in index order per `spec`.
void DirectForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const ReduceSpec& spec, float* y);
void DirectBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const ReduceSpec& spec, float* dx);
void DirectBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const ReduceSpec& spec, float* dw);

// kIm2colGemm (conv_im2col.cc): Eigen sgemm on patch matrices.
void Im2colForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   float* y);
void Im2colBackwardData(const ConvGeometry& g, const float* w, const float* dy, float* dx);
void Im2colBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw);

// kWinograd (conv_winograd.cc): F(2x2, 3x3); requires kh == kw == 3, stride 1.
void WinogradForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     float* y);
// Falls back to Im2colBackwardData when a pad exceeds 2.
void WinogradBackwardData(const ConvGeometry& g, const float* w, const float* dy, float* dx);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_CONV_INTERNAL_H_
