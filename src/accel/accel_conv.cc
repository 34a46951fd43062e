// Convolutions under the accelerator emulation (accel_ops.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/parallel.h"
#include "src/accel/accel_gemm.h"
#include "src/accel/operand_cache.h"
#include "src/kernels/conv_internal.h"

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

// The image of a [N, ch, h, w] tensor rounded per s.conv_operands.
void RoundedImage(const float* t, int64_t n, int64_t plane_floats, const AccelSpec& s,
                  float* dst) {
  RoundOperands(t + n * plane_floats, dst, plane_floats, s.conv_operands, s.flush_bf16_subnormals);
}

// forward y[n, o, p] over t = (c, kh, kw), zero where the tap reads padding:
// per image, the rounded weights [O, K] times the patch matrix [K, pixels]
// that the kernels' im2col gathers from the rounded image.
void ExplicitForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const KernelNumerics& num, const AccelSpec& s, float* y) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t k = g.c * g.kh * g.kw, pixels = g.oh * g.ow, image = g.c * g.h * g.w;
  std::vector<float> wr(static_cast<size_t>(g.o * k));
  RoundOperands(w, wr.data(), g.o * k, s.conv_operands, s.flush_bf16_subnormals);
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<float> xr(static_cast<size_t>(image)), cols(static_cast<size_t>(k * pixels));
    for (int64_t n = n0; n < n1; ++n) {
      RoundedImage(x, n, image, s, xr.data());
      kernels::Im2colImage(kernels::ForwardSource(g, xr.data()), 0, cols.data(), pixels);
      float* yn = y + n * g.o * pixels;
      accel::AccelGemm(wr.data(), k, cols.data(), pixels, yn, pixels, g.o, pixels, k, s, tc,
                       num.reduce, false);
      if (bias == nullptr) continue;
      for (int64_t o = 0; o < g.o; ++o) {
        for (int64_t p = 0; p < pixels; ++p) yn[o * pixels + p] = yn[o * pixels + p] + bias[o];
      }
    }
  });
}

// dgrad dx[n, c, h, w] over t = (o, kh', kw'): the forward product of the
// flipped kernel (kernels::FlipKernel) with dy seen as a stride-1 source
// (kernels::FlippedSource). For stride > 1 that source is dy with stride-1
// zero rows and columns between its pixels, so every one of the O*KH*KW
// taps keeps its slot, zero where it does not reach (h, w).
void ExplicitBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                          const KernelNumerics& num, const AccelSpec& s, float* dx) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t t_all = g.o * g.kh * g.kw, pixels = g.h * g.w, out = g.oh * g.ow;
  std::vector<float> wt(static_cast<size_t>(g.c * t_all));
  kernels::FlipKernel(g, w, wt.data());
  RoundOperands(wt.data(), wt.data(), g.c * t_all, s.conv_operands, s.flush_bf16_subnormals);
  const int64_t dh = (g.oh - 1) * g.stride + 1, dw = (g.ow - 1) * g.stride + 1;
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<float> src(static_cast<size_t>(g.o * dh * dw), 0.0f);
    std::vector<float> cols(static_cast<size_t>(t_all * pixels));
    for (int64_t n = n0; n < n1; ++n) {
      if (g.stride == 1) {
        RoundedImage(dy, n, g.o * out, s, src.data());
      } else {
        const float* dyn = dy + n * g.o * out;
        for (int64_t o = 0; o < g.o; ++o) {
          for (int64_t p = 0; p < g.oh; ++p) {
            for (int64_t q = 0; q < g.ow; ++q) {
              src[(o * dh + p * g.stride) * dw + q * g.stride] = RoundOperand(
                  dyn[(o * g.oh + p) * g.ow + q], s.conv_operands, s.flush_bf16_subnormals);
            }
          }
        }
      }
      kernels::TapSource ts = kernels::FlippedSource(g, src.data());
      ts.h = dh;
      ts.w = dw;
      kernels::Im2colImage(ts, 0, cols.data(), pixels);
      accel::AccelGemm(wt.data(), t_all, cols.data(), pixels, dx + n * g.c * pixels, pixels, g.c,
                       pixels, t_all, s, tc, num.reduce, false);
    }
  });
}

// wgrad dw[o, c, kh, kw] over t = (n, oh, ow): the patch matrices of all
// images side by side [taps, N*pixels] times dy transposed [N*pixels, O],
// both rounded, giving dw transposed. With random scatter order, each
// image's partial is the product over its own pixels (split_k is not
// applied: the images are the partitions) and the N partials are added into
// +0 in the order of ScatterPermutation(seed, step, tensor, o*taps + tap, N).
void ExplicitBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                            const KernelNumerics& num, const AccelSpec& s, float* dw) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t pixels = g.oh * g.ow, terms = g.n * pixels, image = g.c * g.h * g.w;
  const int64_t taps = g.c * g.kh * g.kw;
  std::vector<float> xcols(static_cast<size_t>(taps * terms));
  std::vector<float> dyt(static_cast<size_t>(terms * g.o));
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<float> xr(static_cast<size_t>(image));
    for (int64_t n = n0; n < n1; ++n) {
      RoundedImage(x, n, image, s, xr.data());
      kernels::Im2colImage(kernels::ForwardSource(g, xr.data()), 0, xcols.data() + n * pixels,
                           terms);
      const float* dyn = dy + n * g.o * pixels;
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t o = 0; o < g.o; ++o) {
          dyt[(n * pixels + p) * g.o + o] =
              RoundOperand(dyn[o * pixels + p], s.conv_operands, s.flush_bf16_subnormals);
        }
      }
    }
  });
  std::vector<float> dwt(static_cast<size_t>(taps * g.o));
  if (!s.scatter_random) {
    accel::AccelGemm(xcols.data(), terms, dyt.data(), g.o, dwt.data(), g.o, taps, g.o, terms, s,
                     tc, num.reduce, true);
  } else {
    AccelSpec part = s;
    part.split_k = 1;
    std::vector<float> partials(static_cast<size_t>(g.n * taps * g.o));
    ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        accel::AccelGemm(xcols.data() + n * pixels, terms, dyt.data() + n * pixels * g.o, g.o,
                         partials.data() + n * taps * g.o, g.o, taps, g.o, pixels, part, tc,
                         num.reduce, false);
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
