// Convolutions and matrix products under the accelerator emulation: exact
// on integer data for every configuration (checks the gathers), within the
// format's error bound on random data, thread- and target-independent, and
// the note's golden vectors through Matmul and Conv2dForward.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "conv_test_util.h"
#include "grad_check.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/accel_ops.h"
#include "xwires/core/conv.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"

namespace xw {
namespace {

using convtest::Case;
using convtest::Spec;

Tensor IntTensor(const Shape& shape, uint64_t seed) {
  Tensor t(shape);
  Philox rng(seed, StreamId("accel-test"));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.U32(i) % 7) - 3.0f;
  return t;
}

std::vector<std::pair<std::string, AccelSpec>> Configs() {
  std::vector<std::pair<std::string, AccelSpec>> out;
  AccelSpec s;
  s.conv_operands = s.matmul_operands = OperandRounding::kTf32Rna;
  out.push_back({"tf32 rounding only", s});
  s.accumulation = Accumulation::kTensorCore;
  s.preset = TensorCorePreset::kA100;
  out.push_back({"tf32 a100", s});
  s.preset = TensorCorePreset::kH100;
  s.conv_operands = s.matmul_operands = OperandRounding::kBf16Rne;
  out.push_back({"bf16 h100", s});
  AccelSpec k;
  k.split_k = 3;
  out.push_back({"split-k 3", k});
  k.accumulation = Accumulation::kTensorCore;
  k.preset = TensorCorePreset::kA100;
  k.conv_operands = OperandRounding::kFp16Rne;
  out.push_back({"fp16 a100 split-k 3", k});
  AccelSpec r;
  r.scatter_random = true;
  r.scatter_step = 5;
  out.push_back({"random scatter", r});
  return out;
}

const Case kCases[] = {
    {2, 3, 7, 5, 4, Spec(3, 1, 1, PadMode::kExplicit)},
    {2, 3, 7, 5, 4, Spec(3, 2, 0, PadMode::kSame)},
    {1, 2, 5, 7, 3, Spec(1, 2, 0, PadMode::kSame)},
    // Several panels of pixels and of output channels, each with a
    // narrower last one; a stride-2, pad-1 layer on an even grid (ResNet's).
    {2, 2, 9, 9, 17, Spec(3, 1, 1, PadMode::kExplicit)},
    {2, 3, 8, 8, 20, Spec(3, 2, 1, PadMode::kExplicit)},
};

TEST(AccelConv, ExactOnIntegersEveryConfiguration) {
  for (const auto& [name, accel] : Configs()) {
    for (ConvAlgo algo : {ConvAlgo::kDirect, ConvAlgo::kIm2colGemm}) {
      for (const Case& k : kCases) {
        SCOPED_TRACE(name + " / " + ConvAlgoName(algo));
        Tensor x = IntTensor({k.n, k.c, k.h, k.w}, 1);
        Tensor w = IntTensor({k.o, k.c, k.spec.kernel_h, k.spec.kernel_w}, 2);
        Tensor b = IntTensor({k.o}, 3);
        auto g = MakeConvGeometry(x.shape(), w.shape(), k.spec);
        ASSERT_TRUE(g.ok());
        Tensor dy = IntTensor({g->n, g->o, g->oh, g->ow}, 4);
        const convtest::Reference ref = convtest::NaiveConv(*g, x, w, b, dy);
        KernelNumerics num;
        num.conv_algo = algo;
        Tensor y, dx, dw, db;
        AccelConv2dForward(x, w, &b, k.spec, num, accel, &y);
        AccelConv2dBackward(x, w, dy, k.spec, num, accel, &dx, &dw, &db);
        for (int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], ref.y[i]) << "y " << i;
        for (int64_t i = 0; i < dx.size(); ++i) ASSERT_EQ(dx[i], ref.dx[i]) << "dx " << i;
        for (int64_t i = 0; i < dw.size(); ++i) ASSERT_EQ(dw[i], ref.dw[i]) << "dw " << i;
        for (int64_t i = 0; i < db.size(); ++i) ASSERT_EQ(db[i], ref.db[i]) << "db " << i;
      }
    }
  }
}

// Unit roundoff of the operands' format.
double OperandU(OperandRounding r) {
  switch (r) {
    case OperandRounding::kNone: return std::ldexp(1.0, -24);
    case OperandRounding::kTf32Rna:
    case OperandRounding::kTf32Rne: return std::ldexp(1.0, -11);
    case OperandRounding::kTf32Rz: return std::ldexp(1.0, -10);
    case OperandRounding::kBf16Rne: return std::ldexp(1.0, -8);
    case OperandRounding::kFp16Rne: return std::ldexp(1.0, -11);
  }
  return 1;
}

// Random data: every output within (2u + K * 2^-22) * sum |terms| of the
// double result (two rounded operands, then at most one fp32 rounding per
// term, RZ ulp 2^-23 relative). Gradients included, so this is the gradient
// check of the layer under each precision.
TEST(AccelConv, WithinFormatBoundOnRandomData) {
  for (const auto& [name, accel] : Configs()) {
    const Case k = kCases[0];
    SCOPED_TRACE(name);
    Tensor x = gradcheck::RandomTensor({k.n, k.c, k.h, k.w}, 11);
    Tensor w = gradcheck::RandomTensor({k.o, k.c, k.spec.kernel_h, k.spec.kernel_w}, 12);
    Tensor b({k.o}, 0.0f);
    auto g = MakeConvGeometry(x.shape(), w.shape(), k.spec);
    Tensor dy = gradcheck::RandomTensor({g->n, g->o, g->oh, g->ow}, 13);
    const convtest::Reference ref = convtest::NaiveConv(*g, x, w, b, dy);
    Tensor ax(x.shape()), aw(w.shape()), ady(dy.shape());  // |.| for the bounds
    for (int64_t i = 0; i < x.size(); ++i) ax[i] = std::fabs(x[i]);
    for (int64_t i = 0; i < w.size(); ++i) aw[i] = std::fabs(w[i]);
    for (int64_t i = 0; i < dy.size(); ++i) ady[i] = std::fabs(dy[i]);
    const convtest::Reference mag = convtest::NaiveConv(*g, ax, aw, b, ady);
    KernelNumerics num;
    Tensor y, dx, dw;
    AccelConv2dForward(x, w, &b, k.spec, num, accel, &y);
    AccelConv2dBackward(x, w, dy, k.spec, num, accel, &dx, &dw, nullptr);
    const double u = OperandU(accel.conv_operands);
    auto check = [&](const Tensor& got, const std::vector<double>& want,
                     const std::vector<double>& m, int64_t terms, const char* what) {
      for (int64_t i = 0; i < got.size(); ++i) {
        // fp16 subnormals (below 2^-14) are absolute steps of 2^-25 per operand.
        const double tol = (2 * u + terms * std::ldexp(1.0, -22)) * m[i] +
                           terms * std::ldexp(1.0, -23) + 1e-30;
        ASSERT_LE(std::fabs(got[i] - want[i]), tol) << what << " " << i;
      }
    };
    check(y, ref.y, mag.y, g->c * g->kh * g->kw, "y");
    check(dx, ref.dx, mag.dx, g->o * g->kh * g->kw, "dx");
    check(dw, ref.dw, mag.dw, g->n * g->oh * g->ow, "dw");
  }
}

TEST(AccelConv, SameBitsForThreadsAndTargets) {
  const Case k = kCases[1];
  Tensor x = gradcheck::RandomTensor({k.n, k.c, k.h, k.w}, 21);
  Tensor w = gradcheck::RandomTensor({k.o, k.c, k.spec.kernel_h, k.spec.kernel_w}, 22);
  auto g = MakeConvGeometry(x.shape(), w.shape(), k.spec);
  Tensor dy = gradcheck::RandomTensor({g->n, g->o, g->oh, g->ow}, 23);
  for (const auto& [name, accel] : Configs()) {
    SCOPED_TRACE(name);
    KernelNumerics num;
    num.reduce = *ParseReduceOrder("lanes8", true);
    auto run = [&] {
      Tensor y, dx, dw;
      AccelConv2dForward(x, w, nullptr, k.spec, num, accel, &y);
      AccelConv2dBackward(x, w, dy, k.spec, num, accel, &dx, &dw, nullptr);
      std::vector<float> all(y.data(), y.data() + y.size());
      all.insert(all.end(), dx.data(), dx.data() + dx.size());
      all.insert(all.end(), dw.data(), dw.data() + dw.size());
      return all;
    };
    const int threads = NumThreads();
    SetNumThreads(1);
    const std::vector<float> one = run();
    SetNumThreads(2);
    EXPECT_EQ(run(), one);
    SetNumThreads(threads);
    convtest::ForEachTarget([&](const std::string&) { EXPECT_EQ(run(), one); });
  }
}

TEST(AccelConv, RandomScatterOrderIsKeyed) {
  const Case k = {8, 3, 6, 6, 4, Spec(3, 1, 1, PadMode::kExplicit)};
  Tensor x = gradcheck::RandomTensor({k.n, k.c, k.h, k.w}, 31);
  Tensor w = gradcheck::RandomTensor({k.o, k.c, 3, 3}, 32);
  auto g = MakeConvGeometry(x.shape(), w.shape(), k.spec);
  Tensor dy = gradcheck::RandomTensor({g->n, g->o, g->oh, g->ow}, 33);
  auto dw_for = [&](bool random, uint64_t step) {
    AccelSpec s;
    s.scatter_random = random;
    s.scatter_step = step;
    Tensor dw;
    AccelConv2dBackward(x, w, dy, k.spec, KernelNumerics{}, s, nullptr, &dw, nullptr);
    return std::vector<float>(dw.data(), dw.data() + dw.size());
  };
  const auto a = dw_for(true, 1), b = dw_for(true, 1), c = dw_for(true, 2);
  const auto index = dw_for(false, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);      // another step, another order
  EXPECT_NE(a, index);  // per-image partials in a random order round differently
}

TEST(AccelMatmul, GoldenVectors) {
  const KernelNumerics num;
  float c = 0;
  const float x = std::bit_cast<float>(0x44801000u), one = 1.0f;  // 1024.5
  AccelSpec mm;
  mm.matmul_operands = OperandRounding::kTf32Rna;
  AccelMatmul(&x, &one, &c, 1, 1, 1, false, false, false, num, mm);
  EXPECT_EQ(c, 1025.0f);
  mm.matmul_operands = OperandRounding::kTf32Rne;
  AccelMatmul(&x, &one, &c, 1, 1, 1, false, false, false, num, mm);
  EXPECT_EQ(c, 1024.0f);
  // Conv operands are separate: a 1x1 conv under conv_operands tf32_rna.
  AccelSpec conv;
  conv.conv_operands = OperandRounding::kTf32Rna;
  Tensor xt({1, 1, 1, 1}, x), wt({1, 1, 1, 1}, 1.0f), y;
  AccelConv2dForward(xt, wt, nullptr, Spec(1, 1, 0, PadMode::kExplicit), num, conv, &y);
  EXPECT_EQ(y[0], 1025.0f);
  AccelMatmul(&x, &one, &c, 1, 1, 1, false, false, false, num, conv);  // matmul untouched
  EXPECT_EQ(c, 1024.5f);
  // A dense layer under matmul_operands tf32_rne.
  Tensor xd({1, 1}, x), wd({1, 1}, 1.0f), yd;
  AccelDenseForward(xd, wd, nullptr, num, mm, &yd);
  EXPECT_EQ(yd[0], 1024.0f);  // rne

  const float a[4] = {16777216.0f, 1.0f, 1.0f, -16777216.0f};
  const float b[4] = {1, 1, 1, 1};
  AccelSpec seq;
  AccelMatmul(a, b, &c, 1, 1, 4, false, false, false, num, seq);
  EXPECT_EQ(c, 0.0f);
  seq.split_k = 2;
  AccelMatmul(a, b, &c, 1, 1, 4, false, false, false, num, seq);
  EXPECT_EQ(c, 1.0f);
  AccelSpec tc;
  tc.accumulation = Accumulation::kTensorCore;
  tc.preset = TensorCorePreset::kA100;
  // fp32 operands never reach the tensor cores: the ordered sum.
  AccelMatmul(a, b, &c, 1, 1, 4, false, false, false, num, tc);
  EXPECT_EQ(c, 0.0f);
  tc.matmul_operands = OperandRounding::kTf32Rna;  // 2^24 and 1 are TF32 values
  AccelMatmul(a, b, &c, 1, 1, 4, false, false, false, num, tc);
  EXPECT_EQ(c, 2.0f);
  // Transposed operands gather the same terms.
  AccelMatmul(a, b, &c, 1, 1, 4, true, true, false, num, tc);
  EXPECT_EQ(c, 2.0f);
}

TEST(AccelMatmul, ExactOnIntegersWithTransposes) {
  const int64_t m = 5, n = 37, k = 19;
  Tensor a = IntTensor({m * k}, 41), b = IntTensor({k * n}, 42);
  for (const auto& [name, accel] : Configs()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        SCOPED_TRACE(name);
        std::vector<float> c(m * n, 1.0f);
        AccelMatmul(a.data(), b.data(), c.data(), m, n, k, ta, tb, /*accumulate=*/true,
                    KernelNumerics{}, accel);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 1.0;
            for (int64_t t = 0; t < k; ++t) {
              want += double(ta ? a[t * m + i] : a[i * k + t]) * (tb ? b[j * k + t] : b[t * n + j]);
            }
            ASSERT_EQ(c[i * n + j], want) << i << "," << j;
          }
        }
      }
    }
  }
}

// Dense forward and gradients under each configuration's matmul operands,
// within (2u + K 2^-22) sum |terms| (+ fp16 subnormal steps) of double.
TEST(AccelDense, WithinFormatBoundOnRandomData) {
  const int64_t n = 6, in = 37, out = 11;
  Tensor x = gradcheck::RandomTensor({n, in}, 51), w = gradcheck::RandomTensor({out, in}, 52);
  Tensor b = gradcheck::RandomTensor({out}, 53), dy = gradcheck::RandomTensor({n, out}, 54);
  for (auto [name, accel] : Configs()) {
    SCOPED_TRACE(name);
    accel.matmul_operands = accel.conv_operands;  // the configs' conv formats, on dense
    Tensor y, dx, dw, db;
    AccelDenseForward(x, w, &b, KernelNumerics{}, accel, &y);
    AccelDenseBackward(x, w, dy, KernelNumerics{}, accel, &dx, &dw, &db);
    const double u = OperandU(accel.matmul_operands);
    auto bound = [&](double mag, int64_t terms) {
      return (2 * u + terms * std::ldexp(1.0, -22)) * mag + terms * std::ldexp(1.0, -23) + 1e-30;
    };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < out; ++j) {
        double want = 0, mag = 0;
        for (int64_t t = 0; t < in; ++t) {
          want += double(x[i * in + t]) * w[j * in + t];
          mag += std::fabs(double(x[i * in + t]) * w[j * in + t]);
        }
        ASSERT_LE(std::fabs(y[i * out + j] - (want + b[j])), bound(mag, in) + 1e-6f * std::fabs(b[j]));
      }
      for (int64_t t = 0; t < in; ++t) {
        double want = 0, mag = 0;
        for (int64_t j = 0; j < out; ++j) {
          want += double(dy[i * out + j]) * w[j * in + t];
          mag += std::fabs(double(dy[i * out + j]) * w[j * in + t]);
        }
        ASSERT_LE(std::fabs(dx[i * in + t] - want), bound(mag, out));
      }
    }
    for (int64_t j = 0; j < out; ++j) {
      double dbw = 0;
      for (int64_t t = 0; t < in; ++t) {
        double want = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
          want += double(dy[i * out + j]) * x[i * in + t];
          mag += std::fabs(double(dy[i * out + j]) * x[i * in + t]);
        }
        ASSERT_LE(std::fabs(dw[j * in + t] - want), bound(mag, n));
      }
      for (int64_t i = 0; i < n; ++i) dbw += dy[i * out + j];
      EXPECT_NEAR(db[j], dbw, 1e-5);  // db is not a product: fp32 sum
    }
  }
}

}  // namespace
}  // namespace xw
