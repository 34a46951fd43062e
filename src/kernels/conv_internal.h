// Internal: the per-algorithm convolution entry points behind conv.h and the
// patch-gathering helpers they share. All pointers are dense NCHW / OIHW
// buffers of the sizes `g` implies; outputs are fully overwritten.
#ifndef XWIRES_SRC_KERNELS_CONV_INTERNAL_H_
#define XWIRES_SRC_KERNELS_CONV_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "xwires/core/conv.h"
#include "xwires/core/numerics.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"
#include "src/scratch_floats.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

// Where the taps of a convolution read from. Tap (c, a, b) of output
// (n, p, q) reads source pixel (n, c, p*stride + a - pad_top,
// q*stride + b - pad_left), zero outside the source (padding). Pads may be
// negative (a shifted window), as the data gradient's phases need.
struct TapSource {
  const float* data;       // [images, channels, h, w]
  int64_t channels, h, w;  // source extents
  int kh, kw, stride, pad_top, pad_left;
  int64_t oh, ow;  // output grid the taps are evaluated on
};

// Gathers taps for a fixed range of flattened outputs (n, p, q) of a
// TapSource, with the per-row/column bounds precomputed once so that each tap
// costs a few vector copies. Reset() reuses the buffers (keep one per thread).
// The bounds are target-independent; TapRows (tap_gather.cc, Highway) turns
// them into masks of the dispatched target's width when it copies.
class TapGather {
 public:
  // A run of consecutive outputs (n, p, q0 .. q0+len-1) on one output row,
  // written from offset j of each tap row.
  struct Run {
    int64_t j, len, n, p, q0;
  };
  // Outputs [begin, end) of the images x s.oh x s.ow grid.
  void Reset(const TapSource& s, int64_t begin, int64_t end);
  // Taps t0 .. t1-1 in index order t = (c*kh + a)*kw + b: dst[(t-t0)*ld + j].
  void TapRows(int64_t t0, int64_t t1, float* dst, int64_t ld) const;

  // The plan, for the per-target copy loops.
  const TapSource& source() const { return s_; }
  const std::vector<Run>& runs() const { return runs_; }
  const int64_t* row() const { return row_.data(); }
  const int64_t* col() const { return col_.data(); }
  const int64_t* lo() const { return lo_.data(); }
  const int64_t* hi() const { return hi_.data(); }
  // Whether no tap of a run reads outside the source (stride 1 only, as a
  // pre-padded source has it): then run r's tap (c, a, b) is the run's len
  // floats at data + start()[r] + c*h*w + a*w + b, copied without bounds.
  bool interior() const { return interior_; }
  const int64_t* start() const { return start_.data(); }
  // How many whole images [begin, end) is (0 if it starts or ends inside
  // one), and the first: outputs of images first_image() onwards, each in
  // raster order.
  int64_t whole_images() const { return whole_images_; }
  int64_t first_image() const { return first_image_; }

 private:
  TapSource s_{};
  bool interior_ = false;
  int64_t whole_images_ = 0, first_image_ = 0;
  std::vector<int64_t> start_;  // [run]: interior runs' first source float of tap 0
  std::vector<Run> runs_;
  std::vector<int64_t> row_;     // [run][a]: offset of the source row, -1 if padding
  std::vector<int64_t> col_;     // [run][b]: source column of the run's first valid output
  std::vector<int64_t> lo_, hi_;  // [run][b]: outputs [lo, hi) of the run are in range
};

// cols[t * ld + p * OW + q] for t = (c*KH + a)*KW + b: the zero-padded patch
// matrix of image n of s (im2col).
void Im2colImage(const TapSource& s, int64_t n, float* cols, int64_t ld);

// The inverse (col2im, col2im.cc): dx_img [C, h, w] += every entry of the
// patch gradient cols[t * ld + p * OW + q] at the pixel its tap reads, taps
// in index order, outputs in raster order within a tap (padding dropped).
void Col2imAdd(const ConvGeometry& g, const float* cols, int64_t ld, float* dx_img);

// dx [N, C, H, W] of a stride-2 data gradient (g.stride == 2) from its four
// phases (col2im.cc): pixel (y, x) is pixel (y / 2, x / 2) of
// subs[2 * (y % 2) + x % 2], a [N, C, ceil or floor of H/2, of W/2]
// sub-grid (the phase's rows and columns), or zero where that is null.
// One pass of whole rows, where a scatter per phase wrote every other float
// of dx four times.
void InterleavePhases2(const float* const* subs, const ConvGeometry& g, float* dx);

// Images [n0, n0+k) of an NCHW tensor with `ch` channels of `plane` pixels
// as a [ch, *] matrix whose rows are `ld` floats apart (conv_im2col.cc):
// channel c of image n0 + i at mat + c * ld + i * plane, so that the pixels
// of consecutive images are consecutive columns (ld = k * plane packs them).
void ImagesToMatrix(const float* nchw, int64_t n0, int64_t k, int64_t ch, int64_t plane,
                    int64_t ld, float* mat);

// dst[q * panel + j] = rows[j * ld + q] for q < width, j < panel
// (transpose.cc): tap rows into the ordered GEMM's B panel layout.
void TransposeToPanel(const float* rows, int64_t ld, int64_t width, int64_t panel, float* dst);
// TransposeToPanel with every float written as RoundOperand(value, mode,
// flush) (accel_numerics.h), rounded in registers as it is transposed:
// a product's operand packed and rounded in one pass. kNone: no rounding.
void TransposeToPanelRounded(const float* rows, int64_t ld, int64_t width, int64_t panel,
                             float* dst, OperandRounding mode, bool flush_bf16_subnormals);
// dst [cols, rows] = src [rows, cols] transposed, TransposeToPanel over
// blocks of 16 columns in parallel (transpose.cc). Data movement only.
void TransposeMatrix(const float* src, int64_t rows, int64_t cols, float* dst);

TapSource ForwardSource(const ConvGeometry& g, const float* x);

// kDirect (conv_direct.cc): every output reduces in index order per `spec`.
void DirectForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const ReduceSpec& spec, float* y);
void DirectBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const ReduceSpec& spec, float* dx);
void DirectBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const ReduceSpec& spec, float* dw);

// The filter gradients' fixed schedule (conv_im2col.cc; im2col and implicit
// tiles): images in batches of `per`, the batches split into min(batches, 4)
// contiguous groups that run in parallel. body(partial, n0, k, first,
// next_k) sees each batch [n0, n0 + k) of a group in order: partial is the
// group's own buffer of partial_floats, first marks the group's first batch
// (assign, not add), next_k is the size of the group's next batch (0 at its
// end). Returns the partials, one per group, to be added in group order.
// A function of images and per only: the same bits on any thread count.
std::vector<ScratchFloats> FilterBatches(
    int64_t images, int64_t per, int64_t partial_floats,
    const std::function<void(float*, int64_t, int64_t, bool, int64_t)>& body);
// dw[i] = parts[0][i] + parts[1][i] + ..., added in part order (the bits
// do not depend on the threads), i < n, in parallel.
void SumPartials(const std::vector<const float*>& parts, int64_t n, float* dw);
void SumPartials(const std::vector<ScratchFloats>& partials, int64_t n, float* dw);
// The partials' data pointers, in order (for SumPartials and TapsToFilter).
std::vector<const float*> PartPointers(const std::vector<ScratchFloats>& partials);

// kIm2colGemm (conv_im2col.cc): patch matrices times weight matrices.
// num.gemm "owned": every product on the exact-order kernels, each output
// one TapOrder(num) chain over its terms in index order (forward: taps
// (c, a, b); stride-1 data gradient: flipped taps (o, a', b'); strided data
// gradient: the patch gradient over o, then col2im; filter gradient: per
// batch of about 2048 output pixels over (n, p, q), batches added in
// FilterBatches' order), the same bits on every target and build.
// num.gemm "eigen": Eigen's sgemm and the implicit FMA tiles, whose order
// (blocking, packet FMAs, L-lane partial sums) follows the ISA and target.
void Im2colForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const KernelNumerics& num, float* y);
void Im2colBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const KernelNumerics& num, float* dx);
void Im2colBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const KernelNumerics& num, float* dw);
// The owned im2col and Winograd products' order: a sequential chain over
// the terms in index order, as Eigen's GEBP kernel runs a depth that fits
// one block, fused or not as the profile's kernels.fma says.
ReduceSpec TapOrder(const KernelNumerics& num);
// C [m, n] (+)= op(A) op(B), dense row-major operands (A [m, k] or [k, m]
// when trans_a; B [k, n] or [n, k] when trans_b): Eigen's sgemm under gemm
// "eigen", else the ordered GEMM with every output one TapOrder(num) chain.
void PatchProduct(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                  bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num);

// kIm2colGemm without the patch matrix (conv_implicit.cc), for stride-s
// sources whose output rows are a multiple of the dispatched SIMD target's
// float lanes L wide, or L/2 wide with an even number of rows (L = 16 on
// AVX-512, 8 on AVX2, 4 on SSE4 and NEON).
bool ImplicitApplies(const TapSource& s);
// y[n, o, :] = W [out_ch, T] x patches(src, image n) (+ bias[o]), n < images.
void ImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                       const float* bias, float* y);
// Whether the AVX3 target on a CPU that splits 512-bit operations
// (SplitOpAvx3Dispatched, ordered_gemm.h) runs src's patch GEMM on the AVX2
// target's tiles (NarrowImplicitPatchGemm): rows that 16-float slots do not
// tile and 8-float ones do (4 pixels wide with an even row count, or a
// multiple of 8 but not of 16), where the AVX2 half-row tiles ran VGG's 4x4
// layers at 92 GFLOP/s per core against 67 for the patch matrix and Eigen
// (those layers now take the padding-free products, checked first).
// Changes the tf profile's bits on such CPUs; the fingerprint's
// kernel_target says so (KernelTargetVariant).
bool NarrowImplicitApplies(const TapSource& s);
// ImplicitPatchGemm on the AVX2 target's 8-float tiles.
void NarrowImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch,
                             const float* w, const float* bias, float* y);
// Whether ImplicitBackwardFilter takes src's filter gradient: where
// ImplicitApplies, and on any grid of at most 16 x 16 output pixels when
// out_ch is a multiple of the lanes (channel-vector tiles).
bool ImplicitFilterApplies(const TapSource& s, int64_t out_ch);
// dw [out_ch, T] = Sum over images of dy(n) [out_ch, P] x patches(src, n)^T,
// in fixed groups of `per`-image batches.
void ImplicitBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch,
                            const float* dy, int64_t per, float* dw);

// kDirect on the implicit tiles (conv_implicit_exact.cc), each output's
// reduction in the direct algorithm's order, bit for bit: for sequential and
// lanesK orders (false otherwise). The filter gradient needs out_ch to be a
// multiple of L. The same bits on every target.
bool ExactApplies(const TapSource& s, const ReduceSpec& spec);
// per_chain_bound bounds one chain's state (taps x out_ch) instead of all K
// chains' (DirectBackwardFilter's choice on 16-lane targets).
bool ExactFilterApplies(const TapSource& s, int64_t out_ch, const ReduceSpec& spec,
                        bool per_chain_bound = false);
// The filter gradient with lanesK's K chains in vector lanes
// (conv_filter_lanes.cc): K in {4, 8, 16} dividing the output width. The
// same bits as ExactBackwardFilter, on every target.
bool LanesFilterApplies(const TapSource& s, int64_t out_ch, const ReduceSpec& spec);
void LanesBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                         const ReduceSpec& spec, float* dw);
// As ImplicitPatchGemm, the taps of each output reduced in index order per spec.
void ExactPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                    const float* bias, const ReduceSpec& spec, float* y);
// dw [out_ch, T]: each entry reduced over (n, p, q) in index order per spec.
void ExactBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                         const ReduceSpec& spec, float* dw);

// f(c, o) for every input channel c < c_count and output channel o < o_count,
// c in blocks of 16 with o inside (blocks in parallel): re-laying a kernel
// [O][C][taps] out as [C][O][taps] then reads 16 neighbouring rows per o and
// writes 16 streams, where c outside o read a new page per element of VGG's
// 512 x 512 kernels (rows 18 KiB apart).
template <typename F>
void ForEachChannelPair(int64_t c_count, int64_t o_count, const F& f) {
  constexpr int64_t kBlock = 16;
  ParallelFor((c_count + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t c0 = b0 * kBlock; c0 < std::min(c_count, b1 * kBlock); c0 += kBlock) {
      const int64_t c1 = std::min(c_count, c0 + kBlock);
      for (int64_t o = 0; o < o_count; ++o) {
        for (int64_t c = c0; c < c1; ++c) f(c, o);
      }
    }
  });
}

// Convolutions without the taps that read padding (conv_padding_free.cc):
// output pixels in classes with the same in-range taps, each class one
// ordered GEMM over only those taps. For sequential and lanesK chains
// (`spec`), where a padding tap's zero term changes nothing, so the bits are
// those of the chains over every tap (finite weights). Taken where at most this fraction
// of the taps is in range: VGG's 4x4 planes (3x3, pad 1) have 69%, 2x2 44%,
// 8x8 84%.
inline constexpr double kPaddingFreeMaxFraction = 0.75;
// The fraction of (output pixel, tap) pairs of s that read its data.
double InRangeTapFraction(const TapSource& s);
bool PaddingFreeApplies(const TapSource& s, const ReduceSpec& spec);
// y[n, o, :] = W [out_ch, T] x patches(src, image n) (+ bias[o]), n < images,
// each output's in-range taps reduced in index order per spec.
void PaddingFreePatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                          const float* bias, const ReduceSpec& spec, float* y);
// dw [out_ch, T] = (add ? dw + : ) the chain over images [n0, n0 + images)
// of src and their output pixels (n, p, q), in index order per spec, of
// dy[n, o, p, q] * x at tap t, the terms that read padding left out: each tap
// (a, b) one ordered GEMM over the pixels where it reads the source.
void PaddingFreeBackwardFilter(const TapSource& src, int64_t n0, int64_t images, int64_t out_ch,
                               const float* dy, const ReduceSpec& spec, bool add, float* dw);

// The data gradient of a stride-1 convolution as a forward one (conv_im2col.cc):
// dx = correlation of dy with the kernel flipped in space and transposed in
// channels, W'[c, o, a, b] = W[o, c, kh-1-a, kw-1-b] (`flipped`, C*O*kh*kw
// floats), over dy padded by kh-1-pad_top and kw-1-pad_left on the h x w grid.
TapSource FlippedSource(const ConvGeometry& g, const float* dy);
void FlipKernel(const ConvGeometry& g, const float* w, float* flipped);

// kWinograd (conv_winograd.cc): F(2x2, 3x3); requires kh == kw == 3, stride 1.
// Its 16 element GEMMs run on PatchProduct (num.gemm decides the engine).
void WinogradForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const KernelNumerics& num, float* y);
// Falls back to Im2colBackwardData when a pad exceeds 2.
void WinogradBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                          const KernelNumerics& num, float* dx);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_CONV_INTERNAL_H_
