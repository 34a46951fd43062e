// Convolutions under the accelerator emulation (accel_ops.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/parallel.h"
#include "src/accel/accel_gemm.h"
#include "src/accel/accel_patches.h"
#include "src/accel/operand_cache.h"
#include "src/accel/round_lanes.h"
#include "src/kernels/conv_internal.h"
#include "src/scratch_floats.h"
#include "src/thread_scratch.h"

namespace xw {
namespace {

Tensor Rounded(const Tensor& t, const AccelSpec& s) {
  Tensor r(t.shape());
  RoundOperands(t.data(), r.data(), t.size(), s.conv_operands, s.flush_bf16_subnormals);
  return r;
}

bool ExplicitProducts(const AccelSpec& s) {
  return s.accumulation == Accumulation::kTensorCore || s.split_k > 1;
}

ConvGeometry Geometry(const Tensor& x, const Tensor& w, const Conv2dSpec& spec) {
  auto g = MakeConvGeometry(x.shape(), w.shape(), spec);
  if (!g.ok()) {
    std::fprintf(stderr, "conv2d: %s\n", g.status().ToString().c_str());
    std::abort();
  }
  return *g;
}

// Per-thread scratch of a ParallelFor body over images (thread_scratch.h:
// the bodies run no ParallelFor, AccelGemm runs on their thread).
constexpr int kImageSlot = 0, kPanelSlot = 1;

// The padded copy of PaddedSource(src) in the calling body's scratch,
// zero-filled once: FillPadded then writes only the pixels per image.
float* PaddedScratch(const kernels::TapSource& src) {
  const int64_t floats = accel::PaddedFloats(accel::PaddedSource(src));
  float* pad = ThreadScratch(kImageSlot, floats);
  std::fill(pad, pad + floats, 0.0f);
  return pad;
}

// y[n, o, :] (or dx) = rounded weights [rows, K] times the patch matrix of
// each image of src, gathered from the image's rounded, padded copy
// straight into the GEMM's panels. image(n) is image n's data of `rows_in`
// x `cols_in` pixels per channel at dilation `dilate` (FillPadded).
template <typename ImageFn>
void PatchProducts(const kernels::TapSource& src, int64_t images, const float* wr, int64_t rows,
                   const ImageFn& image, int64_t rows_in, int64_t cols_in, int dilate,
                   const KernelNumerics& num, const AccelSpec& s, float* y) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t k = src.channels * src.kh * src.kw, pixels = src.oh * src.ow;
  accel::GemmRanges ranges;
  ranges.a = accel::F32PanelRange(wr, rows, k, k);
  kernels::TapSource padded = accel::PaddedSource(src);
  ParallelFor(images, 1, [&](int64_t n0, int64_t n1) {
    kernels::TapSource ps = padded;
    float* pad = PaddedScratch(src);
    ps.data = pad;
    float* cols = ThreadScratch(kPanelSlot, accel::PanelFloats(k, pixels));
    accel::GemmRanges r = ranges;
    for (int64_t n = n0; n < n1; ++n) {
      r.b = accel::FillPadded(src, image(n), rows_in, cols_in, dilate, s.conv_operands,
                              s.flush_bf16_subnormals, pad);
      accel::PanelPatches(ps, cols);
      accel::AccelGemm(wr, k, accel::PanelB{cols, accel::kPanel, k * accel::kPanel},
                       y + n * rows * pixels, pixels, rows, pixels, k, s, tc, num.reduce, false,
                       &r);
    }
  });
}

// forward y[n, o, p] over t = (c, kh, kw), zero where the tap reads padding.
void ExplicitForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const KernelNumerics& num, const AccelSpec& s, float* y) {
  const int64_t k = g.c * g.kh * g.kw, pixels = g.oh * g.ow, image = g.c * g.h * g.w;
  ScratchFloats wr(static_cast<size_t>(g.o * k));
  RoundOperands(w, wr.data(), g.o * k, s.conv_operands, s.flush_bf16_subnormals);
  const auto image_n = [&](int64_t n) { return x + n * image; };
  PatchProducts(kernels::ForwardSource(g, nullptr), g.n, wr.data(), g.o, image_n, g.h, g.w, 1,
                num, s, y);
  if (bias == nullptr) return;
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float* yn = y + n * g.o * pixels;
      for (int64_t o = 0; o < g.o; ++o) {
        for (int64_t p = 0; p < pixels; ++p) yn[o * pixels + p] = yn[o * pixels + p] + bias[o];
      }
    }
  });
}

// dgrad dx[n, c, h, w] over t = (o, kh', kw'): the forward product of the
// flipped kernel (kernels::FlipKernel) with dy seen as a stride-1 source
// (kernels::FlippedSource). For stride > 1 that source is dy dilated, with
// stride-1 zero rows and columns between its pixels, so every one of the
// O*KH*KW taps keeps its slot, zero where it does not reach (h, w).
void ExplicitBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                          const KernelNumerics& num, const AccelSpec& s, float* dx) {
  const int64_t t_all = g.o * g.kh * g.kw, out = g.oh * g.ow;
  ScratchFloats wt(static_cast<size_t>(g.c * t_all));
  kernels::FlipKernel(g, w, wt.data());
  RoundOperands(wt.data(), wt.data(), g.c * t_all, s.conv_operands, s.flush_bf16_subnormals);
  kernels::TapSource ts = kernels::FlippedSource(g, nullptr);
  ts.h = (g.oh - 1) * g.stride + 1;
  ts.w = (g.ow - 1) * g.stride + 1;
  const auto image_n = [&](int64_t n) { return dy + n * g.o * out; };
  PatchProducts(ts, g.n, wt.data(), g.c, image_n, g.oh, g.ow, g.stride, num, s, dx);
}

// wgrad dw[o, c, kh, kw] over t = (n, oh, ow): the patch matrices of all
// images side by side [taps, N*pixels] times dy transposed [N*pixels, O]
// (in the GEMM's panel layout), both rounded, giving dw transposed. With
// random scatter order, each image's partial is the product over its own
// pixels (split_k is not applied: the images are the partitions) and the N
// partials are added into +0 in the order of ScatterPermutation(seed, step,
// tensor, o*taps + tap, N).
void ExplicitBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                            const KernelNumerics& num, const AccelSpec& s, float* dw) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t pixels = g.oh * g.ow, terms = g.n * pixels, image = g.c * g.h * g.w;
  const int64_t taps = g.c * g.kh * g.kw, out = g.o * pixels;
  // Written whole below; ScratchFloats neither zero-fills nor, for large
  // blocks, faults in fresh pages each call.
  ScratchFloats xcols(static_cast<size_t>(taps * terms));
  ScratchFloats dyt(static_cast<size_t>(accel::PanelFloats(terms, g.o)));
  const int64_t stride = terms * accel::kPanel;  // between dyt's panels
  const kernels::TapSource src = kernels::ForwardSource(g, nullptr);
  std::vector<accel::GemmRanges> ranges(static_cast<size_t>(g.n));
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    kernels::TapSource ps = accel::PaddedSource(src);
    float* pad = PaddedScratch(src);
    ps.data = pad;
    float* dyr = ThreadScratch(kPanelSlot, out);
    for (int64_t n = n0; n < n1; ++n) {
      ranges[n].a = accel::FillPadded(src, x + n * image, g.h, g.w, 1, s.conv_operands,
                                      s.flush_bf16_subnormals, pad);
      accel::PatchRows(ps, xcols.data() + n * pixels, terms);
      accel::RoundLanes(dy + n * out, dyr, out, s.conv_operands, s.flush_bf16_subnormals);
      ranges[n].b = accel::F32PanelRange(dyr, 1, out, out);
      accel::TransposeToPanels(dyr, pixels, pixels, g.o, stride,
                               dyt.data() + n * pixels * accel::kPanel);
    }
  });
  accel::GemmRanges all = ranges[0];
  for (const accel::GemmRanges& r : ranges) {
    all.a = accel::MergeRanges(all.a, r.a);
    all.b = accel::MergeRanges(all.b, r.b);
  }
  ScratchFloats dwt(static_cast<size_t>(taps * g.o));
  if (!s.scatter_random) {
    accel::AccelGemm(xcols.data(), terms, accel::PanelB{dyt.data(), accel::kPanel, stride},
                     dwt.data(), g.o, taps, g.o, terms, s, tc, num.reduce, true, &all);
  } else {
    AccelSpec part = s;
    part.split_k = 1;
    ScratchFloats partials(static_cast<size_t>(g.n * taps * g.o));
    ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        accel::AccelGemm(xcols.data() + n * pixels, terms,
                         accel::PanelB{dyt.data() + n * pixels * accel::kPanel, accel::kPanel,
                                       stride},
                         partials.data() + n * taps * g.o, g.o, taps, g.o, pixels, part, tc,
                         num.reduce, false, &all);
      }
    });
    ParallelFor(taps, 1, [&](int64_t t0, int64_t t1) {
      std::vector<int64_t> perm;
      for (int64_t tap = t0; tap < t1; ++tap) {
        for (int64_t o = 0; o < g.o; ++o) {
          ScatterPermutation(s.scatter_seed, s.scatter_step, s.scatter_tensor, o * taps + tap,
                             g.n, &perm);
          float r = 0.0f;
          for (int64_t i = 0; i < g.n; ++i) r = r + partials[(perm[i] * taps + tap) * g.o + o];
          dwt[tap * g.o + o] = r;
        }
      }
    });
  }
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t tap = 0; tap < taps; ++tap) dw[o * taps + tap] = dwt[tap * g.o + o];
  }
}

}  // namespace

void AccelConv2dForward(const Tensor& x, const Tensor& w, const Tensor* bias,
                        const Conv2dSpec& spec, const KernelNumerics& num,
                        const AccelSpec& accel, Tensor* y, AccelOperandCache* cache) {
  if (!accel.ConvActive()) return Conv2dForward(x, w, bias, spec, num, y);
  const AccelSpec s = accel.For(accel.conv_operands);
  if (!ExplicitProducts(s)) {
    AccelOperandCache local;
    const accel::RoundedPair r = accel::RoundForward(x, w, s.conv_operands,
                                                     s.flush_bf16_subnormals, cache, &local);
    return Conv2dForward(*r.x, *r.w, bias, spec, num, y);
  }
  const ConvGeometry g = Geometry(x, w, spec);
  y->Resize({g.n, g.o, g.oh, g.ow});
  ExplicitForward(g, x.data(), w.data(), bias ? bias->data() : nullptr, num, s, y->data());
}

void AccelConv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy,
                         const Conv2dSpec& spec, const KernelNumerics& num,
                         const AccelSpec& accel, Tensor* dx, Tensor* dw, Tensor* db,
                         AccelOperandCache* cache) {
  if (!accel.ConvActive()) return Conv2dBackward(x, w, dy, spec, num, dx, dw, db);
  const AccelSpec s = accel.For(accel.conv_operands);
  const bool explicit_data = ExplicitProducts(s);
  const bool explicit_filter = explicit_data || s.scatter_random;
  if (db != nullptr) Conv2dBackward(x, w, dy, spec, num, nullptr, nullptr, db);
  if (!explicit_data && !explicit_filter) {
    AccelOperandCache local;
    const accel::RoundedPair r = accel::RoundBackward(x, w, s.conv_operands,
                                                      s.flush_bf16_subnormals, cache, &local);
    Tensor* dyr = cache != nullptr ? &cache->dy : &local.dy;
    accel::RoundInto(dy, s.conv_operands, s.flush_bf16_subnormals, dyr);
    Conv2dBackward(*r.x, *r.w, *dyr, spec, num, dx, dw, nullptr);
    return;
  }
  if (cache != nullptr) cache->valid = false;
  const ConvGeometry g = Geometry(x, w, spec);
  if (dx != nullptr) {
    if (explicit_data) {
      dx->Resize(x.shape());
      ExplicitBackwardData(g, w.data(), dy.data(), num, s, dx->data());
    } else {
      Conv2dBackward(x, Rounded(w, s), Rounded(dy, s), spec, num, dx, nullptr, nullptr);
    }
  }
  if (dw != nullptr) {
    dw->Resize(w.shape());
    ExplicitBackwardFilter(g, x.data(), dy.data(), num, s, dw->data());
  }
}

}  // namespace xw
