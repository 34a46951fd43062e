// Shared by the conv tests: a naive double-precision convolution (forward and
// all gradients), the list of numerics configurations to sweep, and the
// direct filter gradient's bitwise definition.
#ifndef XWIRES_TESTS_CORE_CONV_TEST_UTIL_H_
#define XWIRES_TESTS_CORE_CONV_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grad_check.h"
#include "xwires/core/conv.h"
#include "xwires/core/numerics.h"
#include "xwires/core/reduce.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace convtest {

// Runs body(target) with the kernels dispatched to each SIMD target this CPU
// can run (AVX-512, AVX2, SSE4, ... : each has its own tile shapes and
// predicates), then restores the CPU's best. gtest messages name the target.
template <typename F>
void ForEachTarget(F&& body) {
  for (const std::string& t : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(t).ok());
    SCOPED_TRACE("SIMD target " + t);
    body(t);
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

struct Reference {
  std::vector<double> y, dx, dw, db;
};

// y = conv(x, w) + b and, for the given dy, dx, dw, db; all in double.
inline Reference NaiveConv(const ConvGeometry& g, const Tensor& x, const Tensor& w,
                           const Tensor& b, const Tensor& dy) {
  Reference r;
  r.y.assign(g.n * g.o * g.oh * g.ow, 0.0);
  r.dx.assign(x.size(), 0.0);
  r.dw.assign(w.size(), 0.0);
  r.db.assign(g.o, 0.0);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      for (int64_t p = 0; p < g.oh; ++p) {
        for (int64_t q = 0; q < g.ow; ++q) {
          const int64_t yi = ((n * g.o + o) * g.oh + p) * g.ow + q;
          double acc = b[o];
          const double d = dy[yi];
          r.db[o] += d;
          for (int64_t c = 0; c < g.c; ++c) {
            for (int a = 0; a < g.kh; ++a) {
              for (int bb = 0; bb < g.kw; ++bb) {
                const int64_t u = p * g.stride + a - g.pad_top;
                const int64_t v = q * g.stride + bb - g.pad_left;
                if (u < 0 || u >= g.h || v < 0 || v >= g.w) continue;
                const int64_t xi = ((n * g.c + c) * g.h + u) * g.w + v;
                const int64_t wi = ((o * g.c + c) * g.kh + a) * g.kw + bb;
                acc += static_cast<double>(x[xi]) * w[wi];
                r.dx[xi] += d * w[wi];
                r.dw[wi] += d * x[xi];
              }
            }
          }
          r.y[yi] = acc;
        }
      }
    }
  }
  return r;
}

struct Config {
  std::string name;
  KernelNumerics num;
};

// Every algorithm; direct with each reduction order (with and without FMA).
inline std::vector<Config> AllConfigs() {
  std::vector<Config> out;
  for (const char* order : {"sequential", "pairwise", "kahan", "lanes4", "lanes8", "lanes16"}) {
    for (bool fma : {false, true}) {
      KernelNumerics num;
      num.conv_algo = ConvAlgo::kDirect;
      num.reduce = *ParseReduceOrder(order, fma);
      out.push_back({std::string("direct/") + order + (fma ? "+fma" : ""), num});
    }
  }
  for (ConvAlgo a : {ConvAlgo::kIm2colGemm, ConvAlgo::kWinograd}) {
    KernelNumerics num;
    num.conv_algo = a;
    num.gemm = GemmKind::kEigen;
    out.push_back({ConvAlgoName(a), num});
  }
  return out;
}

// One algorithm each (direct with the torch-like lanes8+FMA order).
inline std::vector<Config> AlgoConfigs() {
  std::vector<Config> out;
  for (const Config& c : AllConfigs()) {
    if (c.name == "direct/lanes8+fma" || c.name == "direct/sequential" ||
        c.name.rfind("direct", 0) != 0) {
      out.push_back(c);
    }
  }
  return out;
}

struct Case {
  int64_t n, c, h, w, o;
  Conv2dSpec spec;
  std::string Name() const {
    return "n" + std::to_string(n) + "c" + std::to_string(c) + "h" + std::to_string(h) + "w" +
           std::to_string(w) + "o" + std::to_string(o) + "k" + std::to_string(spec.kernel_h) +
           "x" + std::to_string(spec.kernel_w) + "s" + std::to_string(spec.stride) +
           (spec.pad_mode == PadMode::kSame ? "same" : "p" + std::to_string(spec.pad));
  }
};

// A case's geometry and random operands, each drawn with its own seed.
struct Operands {
  ConvGeometry g;
  Tensor x, w, dy;
};
inline Operands MakeOperands(const Case& k, uint64_t x_seed, uint64_t w_seed, uint64_t dy_seed) {
  Operands op;
  op.g = *MakeConvGeometry({k.n, k.c, k.h, k.w}, {k.o, k.c, k.spec.kernel_h, k.spec.kernel_w},
                           k.spec);
  op.x = gradcheck::RandomTensor({k.n, k.c, k.h, k.w}, x_seed);
  op.w = gradcheck::RandomTensor({k.o, k.c, op.g.kh, op.g.kw}, w_seed);
  op.dy = gradcheck::RandomTensor({k.n, k.o, op.g.oh, op.g.ow}, dy_seed);
  return op;
}

// The terms of dw[o, t] over images [n0, n1), pixels (n, p, q) in index
// order: dy(n, o, p, q) into dys and the zero-padded patch entry into xs.
inline void FilterTerms(const ConvGeometry& g, const Tensor& x, const Tensor& dy, int64_t o,
                        int64_t t, int64_t n0, int64_t n1, std::vector<float>* dys,
                        std::vector<float>* xs) {
  const int64_t c = t / (g.kh * g.kw), a = t / g.kw % g.kh, b = t % g.kw;
  dys->clear();
  xs->clear();
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t p = 0; p < g.oh; ++p) {
      for (int64_t q = 0; q < g.ow; ++q) {
        const int64_t u = p * g.stride + a - g.pad_top, v = q * g.stride + b - g.pad_left;
        const bool in = u >= 0 && u < g.h && v >= 0 && v < g.w;
        xs->push_back(in ? x.at(n, c, u, v) : 0.0f);
        dys->push_back(dy.at(n, o, p, q));
      }
    }
  }
}

// Entries of dw that are not, bit for bit, xw::Dot in order `s` over their
// terms (n, p, q): the direct algorithm's filter gradient.
inline int FilterGradMismatches(const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                                const Tensor& dw, const ReduceSpec& s) {
  const int64_t taps = g.c * g.kh * g.kw;
  std::vector<float> dys, xs;
  int bad = 0;
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      FilterTerms(g, x, dy, o, t, 0, g.n, &dys, &xs);
      const float ref = Dot(dys.data(), xs.data(), dys.size(), s);
      const float got = dw[o * taps + t];
      bad += std::memcmp(&ref, &got, 4) != 0;
    }
  }
  return bad;
}

// db[o] against xw::Sum over channel o's dy in (n, oh, ow) order, bit for bit.
inline int BiasGradMismatches(const ConvGeometry& g, const Tensor& dy, const Tensor& db,
                              const ReduceSpec& s) {
  const int64_t plane = g.oh * g.ow;
  std::vector<float> col(g.n * plane);
  int bad = 0;
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t p = 0; p < plane; ++p) col[n * plane + p] = dy[(n * g.o + o) * plane + p];
    }
    const float ref = Sum(col.data(), static_cast<int64_t>(col.size()), s);
    const float got = db[o];
    bad += std::memcmp(&ref, &got, 4) != 0;
  }
  return bad;
}

inline Conv2dSpec Spec(int k, int stride, int pad, PadMode mode) {
  Conv2dSpec s;
  s.kernel_h = s.kernel_w = k;
  s.stride = stride;
  s.pad = pad;
  s.pad_mode = mode;
  return s;
}

}  // namespace convtest
}  // namespace xw

#endif  // XWIRES_TESTS_CORE_CONV_TEST_UTIL_H_
