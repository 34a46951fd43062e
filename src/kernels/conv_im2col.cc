// kIm2colGemm convolution (TensorFlow's SpatialConvolution scheme): patch
// matrices times weight matrices, forward and backward. Under gemm "owned"
// every product is an ordered chain (TapOrder) on the dispatched exact-order
// kernels, the same bits on every target and build; under gemm "eigen" on
// Eigen's sgemm and the implicit FMA tiles, whose order follows the ISA.
// Work is split into image groups whose size depends only on the output
// plane, so results do not depend on the thread count.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/gemm_internal.h"
#include "src/thread_scratch.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

TapSource ForwardSource(const ConvGeometry& g, const float* x) {
  return TapSource{x, g.c, g.h, g.w, g.kh, g.kw, g.stride, g.pad_top, g.pad_left, g.oh, g.ow};
}

TapSource FlippedSource(const ConvGeometry& g, const float* dy) {
  return TapSource{dy,   g.o, g.oh, g.ow, g.kh, g.kw, 1, g.kh - 1 - g.pad_top,
                   g.kw - 1 - g.pad_left, g.h, g.w};
}

void FlipKernel(const ConvGeometry& g, const float* w, float* flipped) {
  const int64_t khw = int64_t{g.kh} * g.kw;
  ForEachChannelPair(g.c, g.o, [&](int64_t c, int64_t o) {
    for (int64_t t = 0; t < khw; ++t) {
      flipped[(c * g.o + o) * khw + t] = w[(o * g.c + c) * khw + (khw - 1 - t)];
    }
  });
}

void ImagesToMatrix(const float* nchw, int64_t n0, int64_t k, int64_t ch, int64_t plane,
                    int64_t ld, float* mat) {
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t c = 0; c < ch; ++c) {
      const float* t = nchw + ((n0 + i) * ch + c) * plane;
      std::copy(t, t + plane, mat + c * ld + i * plane);
    }
  }
}

namespace {

bool IsPointwise(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.stride == 1 && g.pad_top == 0 && g.pad_left == 0;
}

// Images per GEMM: enough columns (~512) to keep Eigen's kernel busy on small
// planes of `plane` output pixels. A function of the geometry only.
int64_t ImagesPerGemm(int64_t plane, int64_t images) {
  return std::clamp<int64_t>(512 / plane, 1, std::max<int64_t>(1, (images + 3) / 4));
}
int64_t ImagesPerGemm(const ConvGeometry& g) { return ImagesPerGemm(g.oh * g.ow, g.n); }

// The implicit tiles' order: each output one FMA chain over its taps in
// index order, as Eigen's GEBP kernel runs a depth that fits one block. The
// padding-free products (small planes) follow it too.
constexpr ReduceSpec kTapChain{ReduceOrder::kSequential, 1, true};

// ThreadScratch slots of a GEMM batch: its patch matrix (or patch gradient),
// its output matrix, and dY as a matrix.
constexpr int kColsSlot = 0, kMatSlot = 1, kActSlot = 2;

void MatrixToImages(const float* mat, int64_t n0, int64_t k, int64_t ch, int64_t plane,
                    float* nchw) {
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t c = 0; c < ch; ++c) {
      const float* m = mat + c * k * plane + i * plane;
      std::copy(m, m + plane, nchw + ((n0 + i) * ch + c) * plane);
    }
  }
}

// Patch matrix [T, k*P] of images [n0, n0+k) of src: the source itself for a
// single image of a pointwise convolution, else gathered into its scratch slot.
const float* Patches(const TapSource& src, bool pointwise, int64_t n0, int64_t k) {
  const int64_t plane = src.oh * src.ow, taps = src.channels * src.kh * src.kw;
  if (pointwise && k == 1) return src.data + n0 * src.channels * plane;
  float* cols = ThreadScratch(kColsSlot, taps * k * plane);
  if (pointwise) {
    ImagesToMatrix(src.data, n0, k, src.channels, plane, k * plane, cols);
    return cols;
  }
  for (int64_t i = 0; i < k; ++i) Im2colImage(src, n0 + i, cols + i * plane, k * plane);
  return cols;
}

// y[n] = W [out, T] x patches(src, image n) [T, P] (+ bias) for all images of
// src, P = src.oh * src.ow output pixels, T = channels * kh * kw taps: the
// forward pass, and for stride 1 also the data gradient. Eigen's order.
void PatchGemm(const TapSource& src, bool pointwise, int64_t images, int64_t out_ch,
               const float* w, const float* bias, float* y) {
  if (PaddingFreeApplies(src, kTapChain)) {
    return PaddingFreePatchGemm(src, images, out_ch, w, bias, kTapChain, y);
  }
  if (ImplicitApplies(src)) return ImplicitPatchGemm(src, images, out_ch, w, bias, y);
  if (NarrowImplicitApplies(src)) return NarrowImplicitPatchGemm(src, images, out_ch, w, bias, y);
  const int64_t plane = src.oh * src.ow, taps = src.channels * src.kh * src.kw;
  ParallelFor(images, ImagesPerGemm(plane, images), [&](int64_t n0, int64_t n1) {
    const int64_t k = n1 - n0, cols = k * plane;
    const float* patches = Patches(src, pointwise, n0, k);
    float* out = k == 1 ? y + n0 * out_ch * plane : ThreadScratch(kMatSlot, out_ch * cols);
    EigenGemm(w, taps, patches, cols, out, cols, out_ch, cols, taps, false, false, false);
    if (bias != nullptr) {
      for (int64_t o = 0; o < out_ch; ++o) {
        for (int64_t j = 0; j < cols; ++j) out[o * cols + j] += bias[o];
      }
    }
    if (k > 1) MatrixToImages(out, n0, k, out_ch, plane, y);
  });
}

// Im2colBackwardData for stride 1, as TensorFlow's backprop-input computes
// it: one patch GEMM of dy with the flipped kernel (FlippedSource), inner
// size O*kh*kw, instead of a GEMM with inner size O, a zeroed patch gradient
// and a scatter.
void FlippedBackwardData(const ConvGeometry& g, const float* w, const float* dy, float* dx) {
  ScratchFloats flipped(g.c * g.o * g.kh * g.kw);
  FlipKernel(g, w, flipped.data());
  PatchGemm(FlippedSource(g, dy), false, g.n, g.c, flipped.data(), nullptr, dx);
}

}  // namespace

std::vector<ScratchFloats> FilterBatches(
    int64_t images, int64_t per, int64_t partial_floats,
    const std::function<void(float*, int64_t, int64_t, bool, int64_t)>& body) {
  const int64_t batches = (images + per - 1) / per;
  const int64_t groups = std::min<int64_t>(batches, 4);
  // Per call, not thread-local: this thread may run another convolution while
  // it waits in ParallelFor (TBB work stealing), which must not share them.
  std::vector<ScratchFloats> partials(groups);
  ParallelFor(groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t gi = g0; gi < g1; ++gi) {
      partials[gi].resize(partial_floats);
      const int64_t b0 = gi * batches / groups, b1 = (gi + 1) * batches / groups;
      for (int64_t bi = b0; bi < b1; ++bi) {
        const int64_t n0 = bi * per, k = std::min(per, images - n0);
        const int64_t next_k = bi + 1 < b1 ? std::min(per, images - n0 - k) : 0;
        body(partials[gi].data(), n0, k, bi == b0, next_k);
      }
    }
  });
  return partials;
}

void SumPartials(const std::vector<const float*>& parts, int64_t n, float* dw) {
  ParallelFor(n, GrainFor(n, 4096, 16), [&](int64_t i0, int64_t i1) {
    std::copy(parts[0] + i0, parts[0] + i1, dw + i0);
    for (size_t k = 1; k < parts.size(); ++k) {
      const float* part = parts[k];
      for (int64_t i = i0; i < i1; ++i) dw[i] += part[i];
    }
  });
}

std::vector<const float*> PartPointers(const std::vector<ScratchFloats>& partials) {
  std::vector<const float*> parts;
  for (const ScratchFloats& p : partials) parts.push_back(p.data());
  return parts;
}

void SumPartials(const std::vector<ScratchFloats>& partials, int64_t n, float* dw) {
  SumPartials(PartPointers(partials), n, dw);
}

ReduceSpec TapOrder(const KernelNumerics& num) {
  return ReduceSpec{ReduceOrder::kSequential, 1, num.reduce.fma};
}

// C [m, n] = op(A) B on the engine `num` selects: Eigen's sgemm, or the
// ordered GEMM with every output one TapOrder chain over the k terms.
void PatchProduct(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                  bool trans_a, bool trans_b, bool accumulate, const KernelNumerics& num) {
  if (num.gemm == GemmKind::kEigen) {
    return EigenGemm(a, trans_a ? m : k, b, trans_b ? k : n, c, n, m, n, k, trans_a, trans_b,
                     accumulate);
  }
  KernelNumerics chain;
  chain.gemm = GemmKind::kOwned;
  chain.reduce = TapOrder(num);
  Matmul(a, b, c, m, n, k, trans_a, trans_b, accumulate, chain);
}

void Im2colForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const KernelNumerics& num, float* y) {
  // The owned order is the direct algorithm's forward under TapOrder: each
  // output one chain over its zero-padded taps (c, a, b) in index order,
  // bias added after (conv_direct.cc picks the fastest exact route).
  if (num.gemm == GemmKind::kOwned) return DirectForward(g, x, w, bias, TapOrder(num), y);
  PatchGemm(ForwardSource(g, x), IsPointwise(g), g.n, g.o, w, bias, y);
}

void Im2colBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const KernelNumerics& num, float* dx) {
  if (g.stride == 1 && num.gemm == GemmKind::kOwned) {
    // As TF's backprop-input: one chain per dx pixel over the flipped
    // kernel's taps (o, a', b'), the direct data gradient's order.
    return DirectBackwardData(g, w, dy, TapOrder(num), dx);
  }
  if (g.stride == 1 && !IsPointwise(g)) return FlippedBackwardData(g, w, dy, dx);
  const int64_t plane = g.oh * g.ow, taps = g.c * g.kh * g.kw, per = ImagesPerGemm(g);
  const int64_t in_plane = g.h * g.w;
  ParallelFor(g.n, per, [&](int64_t n0, int64_t n1) {
    const int64_t k = n1 - n0, cols = k * plane;
    const float* dym = dy + n0 * g.o * plane;
    if (k > 1) {
      float* m = ThreadScratch(kActSlot, g.o * cols);
      ImagesToMatrix(dy, n0, k, g.o, plane, cols, m);
      dym = m;
    }
    // Patch gradient [T, k*P] = W^T dY.
    float* grad = (IsPointwise(g) && k == 1) ? dx + n0 * g.c * in_plane
                                             : ThreadScratch(kColsSlot, taps * cols);
    PatchProduct(w, dym, grad, taps, cols, g.o, true, false, false, num);
    if (IsPointwise(g)) {
      if (k > 1) MatrixToImages(grad, n0, k, g.c, plane, dx);
      return;
    }
    for (int64_t i = 0; i < k; ++i) {
      float* img = dx + (n0 + i) * g.c * in_plane;
      std::fill(img, img + g.c * in_plane, 0.0f);
      Col2imAdd(g, grad + i * plane, cols, img);
    }
  });
}

namespace {

// The owned filter gradient: per batch of `per` images, each output one
// TapOrder chain over the batch's pixels (n, p, q) in index order (the
// direct filter gradient of the batch), batch results added in order within
// FilterBatches' groups, groups in order. The same schedule as the channel-
// vector tiles, on every shape and target.
void OwnedBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, int64_t per,
                         const KernelNumerics& num, float* dw) {
  const int64_t floats = g.o * g.c * g.kh * g.kw;
  const ReduceSpec spec = TapOrder(num);
  const auto partials =
      FilterBatches(g.n, per, floats, [&](float* acc, int64_t n0, int64_t k, bool first, int64_t) {
        ConvGeometry sub = g;
        sub.n = k;
        const float* xb = x + n0 * g.c * g.h * g.w;
        const float* dyb = dy + n0 * g.o * g.oh * g.ow;
        if (first) return DirectBackwardFilter(sub, xb, dyb, spec, acc);
        ScratchFloats batch(floats);
        DirectBackwardFilter(sub, xb, dyb, spec, batch.data());
        for (int64_t i = 0; i < floats; ++i) acc[i] += batch[i];
      });
  SumPartials(partials, floats, dw);
}

}  // namespace

void Im2colBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const KernelNumerics& num, float* dw) {
  const TapSource src = ForwardSource(g, x);
  // Batches of ~2048 output pixels: a pixel-vector tile ends in a
  // horizontal sum per batch, so small planes need more images per batch.
  const int64_t per_batch = std::clamp<int64_t>(2048 / (g.oh * g.ow), 1, g.n);
  if (num.gemm == GemmKind::kOwned) return OwnedBackwardFilter(g, x, dy, per_batch, num, dw);
  if (PaddingFreeApplies(src, kTapChain)) {
    // The channel-vector tiles' sums (one chain per output and batch, batch
    // results added in order within FilterBatches' groups), without the
    // terms that read padding.
    const auto partials = FilterBatches(
        g.n, per_batch, g.o * g.c * g.kh * g.kw,
        [&](float* acc, int64_t n0, int64_t k, bool first, int64_t) {
          PaddingFreeBackwardFilter(src, n0, k, g.o, dy, kTapChain, !first, acc);
        });
    return SumPartials(partials, g.o * g.c * g.kh * g.kw, dw);
  }
  if (ImplicitFilterApplies(src, g.o)) {
    return ImplicitBackwardFilter(src, g.n, g.o, dy, per_batch, dw);
  }
  const int64_t plane = g.oh * g.ow, taps = g.c * g.kh * g.kw;
  const bool pointwise = IsPointwise(g);
  const auto partials = FilterBatches(
      g.n, ImagesPerGemm(g), g.o * taps,
      [&](float* acc, int64_t n0, int64_t k, bool first, int64_t) {
        const int64_t cols = k * plane;
        const float* patches = Patches(src, pointwise, n0, k);
        const float* dym = dy + n0 * g.o * plane;
        if (k > 1) {
          float* m = ThreadScratch(kActSlot, g.o * cols);
          ImagesToMatrix(dy, n0, k, g.o, plane, cols, m);
          dym = m;
        }
        // dW [O, T] (+)= dY [O, kP] x patches^T.
        EigenGemm(dym, cols, patches, cols, acc, taps, g.o, taps, cols, false, true, !first);
      });
  SumPartials(partials, g.o * taps, dw);
}

}  // namespace kernels
}  // namespace xw
