// Internal: the convolutions' operands in AccelGemm's panel layout
// (accel_gemm.h, PanelB), written by the gathers themselves so that the
// tensor-core GEMM reads its panels as they are: no patch matrix with rows
// a page apart to be packed again per chunk.
//
// Thread-safety: each call writes only dst.
#ifndef XWIRES_SRC_ACCEL_ACCEL_PATCHES_H_
#define XWIRES_SRC_ACCEL_ACCEL_PATCHES_H_

#include <cstdint>

#include "src/accel/accel_gemm.h"
#include "src/kernels/conv_internal.h"

namespace xw {
namespace accel {

// Floats of a panel-layout B of k terms and n columns (the last panel
// padded to kPanel columns).
inline int64_t PanelFloats(int64_t k, int64_t n) { return (n + kPanel - 1) / kPanel * kPanel * k; }

// The taps of s over a padded copy of its image: planes of
// (oh - 1) * stride + kh rows and (ow - 1) * stride + kw columns (every
// float a tap reads), no padding, data null. Same taps, same values: the
// gathers then copy whole runs without bounds or masks (stride 1).
kernels::TapSource PaddedSource(const kernels::TapSource& s);
inline int64_t PaddedFloats(const kernels::TapSource& p) { return p.channels * p.h * p.w; }

// Writes image ([channels, rows, cols]) rounded per mode into the padded
// copy dst of PaddedSource(s): pixel (i, j) at dilated source position
// (i * dilate, j * dilate) of s (s.h, s.w are the dilated extents; dilate
// 1: s's own image). Writes only the pixels that land inside dst: the
// rest of dst (padding, dilation's holes) must hold zeros already, and
// stays as it is, so one zero-fill serves every image of a geometry.
// Returns the range of the rounded pixels written (OperandRange).
OperandRange FillPadded(const kernels::TapSource& s, const float* image, int64_t rows,
                        int64_t cols, int dilate, OperandRounding mode, bool flush_subnormals,
                        float* dst);

// The patch matrix of image 0 of s ([taps, oh * ow], taps = channels * kh
// * kw in im2col's order), s a source whose taps all read inside its data
// (PaddedSource's, pads 0), in panel layout: dst[(p * taps + t) * kPanel +
// j] is tap t of output pixel p * kPanel + j, zero for the last panel's
// missing pixels. Read it as PanelB{dst, kPanel, taps * kPanel}. dst holds
// PanelFloats(taps, oh * ow).
void PanelPatches(const kernels::TapSource& s, float* dst);

// The same patch matrix row-major: dst[t * ld + pixel] (im2col's layout).
void PatchRows(const kernels::TapSource& s, float* dst, int64_t ld);

// B [rows, cols] = src^T for src [cols, rows] (row c at src + c * ld), in
// panel layout with panels `panel_stride` floats apart: dst[p * panel_stride
// + r * kPanel + j] = src[(p * kPanel + j) * ld + r], zero for the last
// panel's missing columns. The filter gradient's dy of one image, whose
// channels are the GEMM's columns.
void TransposeToPanels(const float* src, int64_t ld, int64_t rows, int64_t cols,
                       int64_t panel_stride, float* dst);

}  // namespace accel
}  // namespace xw

#endif  // XWIRES_SRC_ACCEL_ACCEL_PATCHES_H_
