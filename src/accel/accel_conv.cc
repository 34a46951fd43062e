// Convolutions under the accelerator emulation (accel_kernels.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "xwires/core/accel_ops.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/parallel.h"

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

void ExplicitForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const KernelNumerics& num, const AccelSpec& s, float* y) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t k = g.c * g.kh * g.kw, pixels = g.oh * g.ow;
  std::vector<float> wr(static_cast<size_t>(g.o * k));
  RoundOperands(w, wr.data(), g.o * k, s.conv_operands, s.flush_bf16_subnormals);
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<float> cols(static_cast<size_t>(pixels * k));
    for (int64_t n = n0; n < n1; ++n) {
      const float* xn = x + n * g.c * g.h * g.w;
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t oh = p / g.ow, ow = p % g.ow;
        float* row = cols.data() + p * k;
        for (int64_t c = 0, t = 0; c < g.c; ++c) {
          for (int a = 0; a < g.kh; ++a) {
            const int64_t ih = oh * g.stride - g.pad_top + a;
            for (int b = 0; b < g.kw; ++b, ++t) {
              const int64_t iw = ow * g.stride - g.pad_left + b;
              const bool in = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
              row[t] = in ? RoundOperand(xn[(c * g.h + ih) * g.w + iw], s.conv_operands,
                                         s.flush_bf16_subnormals)
                          : 0.0f;
            }
          }
        }
      }
      for (int64_t o = 0; o < g.o; ++o) {
        float* yo = y + (n * g.o + o) * pixels;
        for (int64_t p = 0; p < pixels; ++p) {
          const float d = AccelDot(wr.data() + o * k, cols.data() + p * k, k, s, tc, num.reduce);
          yo[p] = bias ? d + bias[o] : d;
        }
      }
    }
  });
}

void ExplicitBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                          const KernelNumerics& num, const AccelSpec& s, float* dx) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t taps = g.kh * g.kw, t_all = g.o * taps, pixels = g.h * g.w;
  // wt[c][(o, kh', kw')] = w[o, c, KH-1-kh', KW-1-kw'], rounded.
  std::vector<float> wt(static_cast<size_t>(g.c * t_all));
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t o = 0; o < g.o; ++o) {
      for (int a = 0; a < g.kh; ++a) {
        for (int b = 0; b < g.kw; ++b) {
          const float v = w[((o * g.c + c) * g.kh + (g.kh - 1 - a)) * g.kw + (g.kw - 1 - b)];
          wt[c * t_all + (o * g.kh + a) * g.kw + b] =
              RoundOperand(v, s.conv_operands, s.flush_bf16_subnormals);
        }
      }
    }
  }
  ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<float> gat(static_cast<size_t>(pixels * t_all));
    for (int64_t n = n0; n < n1; ++n) {
      const float* dyn = dy + n * g.o * g.oh * g.ow;
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t h = p / g.w, wc = p % g.w;
        float* row = gat.data() + p * t_all;
        for (int64_t o = 0, t = 0; o < g.o; ++o) {
          for (int a = 0; a < g.kh; ++a) {
            const int64_t num_h = h + g.pad_top - (g.kh - 1 - a);
            const bool hok = num_h >= 0 && num_h % g.stride == 0 && num_h / g.stride < g.oh;
            for (int b = 0; b < g.kw; ++b, ++t) {
              const int64_t num_w = wc + g.pad_left - (g.kw - 1 - b);
              const bool ok =
                  hok && num_w >= 0 && num_w % g.stride == 0 && num_w / g.stride < g.ow;
              row[t] = ok ? RoundOperand(
                                dyn[(o * g.oh + num_h / g.stride) * g.ow + num_w / g.stride],
                                s.conv_operands, s.flush_bf16_subnormals)
                          : 0.0f;
            }
          }
        }
      }
      for (int64_t c = 0; c < g.c; ++c) {
        float* dxc = dx + (n * g.c + c) * pixels;
        for (int64_t p = 0; p < pixels; ++p) {
          dxc[p] = AccelDot(wt.data() + c * t_all, gat.data() + p * t_all, t_all, s, tc,
                            num.reduce);
        }
      }
    }
  });
}

void ExplicitBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                            const KernelNumerics& num, const AccelSpec& s, float* dw) {
  const TensorCoreSpec tc = s.TensorCoreFor(s.conv_operands);
  const int64_t pixels = g.oh * g.ow, terms = g.n * pixels;
  const int64_t taps = g.c * g.kh * g.kw;
  // dyt[o][(n, oh, ow)], rounded.
  std::vector<float> dyt(static_cast<size_t>(g.o * terms));
  ParallelFor(g.o, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      for (int64_t n = 0; n < g.n; ++n) {
        const float* src = dy + (n * g.o + o) * pixels;
        float* dst = dyt.data() + o * terms + n * pixels;
        for (int64_t p = 0; p < pixels; ++p) {
          dst[p] = RoundOperand(src[p], s.conv_operands, s.flush_bf16_subnormals);
        }
      }
    }
  });
  // Per image partials for the random scatter order; the images are the
  // partitions there, so split_k does not apply.
  AccelSpec part = s;
  if (s.scatter_random) part.split_k = 1;
  ParallelFor(taps, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float> xrow(static_cast<size_t>(terms));
    std::vector<float> partials(static_cast<size_t>(g.n));
    std::vector<int64_t> perm;
    for (int64_t tap = t0; tap < t1; ++tap) {
      const int64_t c = tap / (g.kh * g.kw), a = (tap / g.kw) % g.kh, b = tap % g.kw;
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t p = 0; p < pixels; ++p) {
          const int64_t ih = (p / g.ow) * g.stride - g.pad_top + a;
          const int64_t iw = (p % g.ow) * g.stride - g.pad_left + b;
          const bool in = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
          xrow[n * pixels + p] =
              in ? RoundOperand(x[((n * g.c + c) * g.h + ih) * g.w + iw], s.conv_operands,
                                s.flush_bf16_subnormals)
                 : 0.0f;
        }
      }
      for (int64_t o = 0; o < g.o; ++o) {
        const float* d = dyt.data() + o * terms;
        float r;
        if (!s.scatter_random) {
          r = AccelDot(d, xrow.data(), terms, s, tc, num.reduce);
        } else {
          for (int64_t n = 0; n < g.n; ++n) {
            partials[n] = AccelDot(d + n * pixels, xrow.data() + n * pixels, pixels, part, tc,
                                   num.reduce);
          }
          ScatterPermutation(s.scatter_seed, s.scatter_step, s.scatter_tensor, o * taps + tap,
                             g.n, &perm);
          r = 0.0f;
          for (int64_t i = 0; i < g.n; ++i) r = r + partials[perm[i]];
        }
        dw[o * taps + tap] = r;
      }
    }
  });
}

}  // namespace

void AccelConv2dForward(const Tensor& x, const Tensor& w, const Tensor* bias,
                        const Conv2dSpec& spec, const KernelNumerics& num,
                        const AccelSpec& accel, Tensor* y) {
  if (!accel.ConvActive()) return Conv2dForward(x, w, bias, spec, num, y);
  const AccelSpec s = accel.For(accel.conv_operands);
  if (!ExplicitProducts(s)) return Conv2dForward(Rounded(x, s), Rounded(w, s), bias, spec, num, y);
  const ConvGeometry g = Geometry(x, w, spec);
  y->Resize({g.n, g.o, g.oh, g.ow});
  ExplicitForward(g, x.data(), w.data(), bias ? bias->data() : nullptr, num, s, y->data());
}

void AccelConv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy,
                         const Conv2dSpec& spec, const KernelNumerics& num,
                         const AccelSpec& accel, Tensor* dx, Tensor* dw, Tensor* db) {
  if (!accel.ConvActive()) return Conv2dBackward(x, w, dy, spec, num, dx, dw, db);
  const AccelSpec s = accel.For(accel.conv_operands);
  const bool explicit_data = ExplicitProducts(s);
  const bool explicit_filter = explicit_data || s.scatter_random;
  if (db != nullptr) Conv2dBackward(x, w, dy, spec, num, nullptr, nullptr, db);
  if (!explicit_data && !explicit_filter) {
    const Tensor dyr = Rounded(dy, s);
    Conv2dBackward(Rounded(x, s), Rounded(w, s), dyr, spec, num, dx, dw, nullptr);
    return;
  }
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
