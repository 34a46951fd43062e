#include "xwires/core/conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "conv_test_util.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "grad_check.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace {

using convtest::Case;
using convtest::Spec;
using gradcheck::RandomTensor;

TEST(ConvGeometryTest, TensorFlowSamePadding) {
  auto g = MakeConvGeometry({1, 1, 32, 32}, {1, 1, 3, 3}, Spec(3, 2, 0, PadMode::kSame));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->oh, 16);
  EXPECT_EQ(g->ow, 16);
  EXPECT_EQ(g->pad_top, 0);  // TF puts the odd pixel at the bottom/right
  EXPECT_EQ(g->pad_bottom, 1);
  EXPECT_EQ(g->pad_left, 0);
  EXPECT_EQ(g->pad_right, 1);
  g = MakeConvGeometry({1, 1, 7, 8}, {1, 1, 3, 3}, Spec(3, 2, 0, PadMode::kSame));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->oh, 4);  // ceil(7/2); total pad 2 -> (1, 1)
  EXPECT_EQ(g->pad_top, 1);
  EXPECT_EQ(g->pad_bottom, 1);
  EXPECT_EQ(g->ow, 4);  // ceil(8/2); total pad 1 -> (0, 1)
  EXPECT_EQ(g->pad_left, 0);
  EXPECT_EQ(g->pad_right, 1);
  g = MakeConvGeometry({1, 1, 9, 9}, {1, 1, 3, 3}, Spec(3, 1, 0, PadMode::kSame));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->oh, 9);
  EXPECT_EQ(g->pad_top, 1);
  EXPECT_EQ(g->pad_bottom, 1);
  g = MakeConvGeometry({1, 1, 32, 32}, {1, 1, 1, 1}, Spec(1, 2, 0, PadMode::kSame));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->oh, 16);
  EXPECT_EQ(g->pad_top + g->pad_bottom, 0);
}

TEST(ConvGeometryTest, ExplicitPaddingSameShapeDifferentValues) {
  auto g = MakeConvGeometry({1, 1, 32, 32}, {1, 1, 3, 3}, Spec(3, 2, 1, PadMode::kExplicit));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->oh, 16);
  EXPECT_EQ(g->pad_top, 1);
  EXPECT_EQ(g->pad_bottom, 1);
  // Same output shape as TF SAME, but the window is shifted by one pixel.
  Tensor x = RandomTensor({2, 3, 32, 32}, 1), w = RandomTensor({4, 3, 3, 3}, 2);
  Tensor y_same, y_pad;
  KernelNumerics num;
  Conv2dForward(x, w, nullptr, Spec(3, 2, 0, PadMode::kSame), num, &y_same);
  Conv2dForward(x, w, nullptr, Spec(3, 2, 1, PadMode::kExplicit), num, &y_pad);
  ASSERT_EQ(y_same.shape(), y_pad.shape());
  EXPECT_EQ(y_same.shape(), (Shape{2, 4, 16, 16}));
  int64_t differ = 0;
  for (int64_t i = 0; i < y_same.size(); ++i) differ += y_same[i] != y_pad[i];
  EXPECT_GT(differ, y_same.size() / 2);
  // SAME output (p, q) is explicit output (p, q) shifted by one input pixel:
  // SAME reads rows 2p .. 2p+2, explicit pad 1 reads 2p-1 .. 2p+1.
  Tensor y_shift;
  Conv2dForward(x, w, nullptr, Spec(3, 1, 1, PadMode::kExplicit), num, &y_shift);
  EXPECT_EQ(y_same.at(1, 2, 3, 4), y_shift.at(1, 2, 7, 9));
}

TEST(ConvGeometryTest, BadShapesNameTheProblem) {
  auto expect_error = [](const Shape& x, const Shape& w, const Conv2dSpec& s, const char* part) {
    auto g = MakeConvGeometry(x, w, s);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(g.status().message().find(part), std::string::npos) << g.status().message();
  };
  expect_error({1, 3, 8}, {4, 3, 3, 3}, Spec(3, 1, 1, PadMode::kExplicit), "rank 4");
  expect_error({1, 3, 8, 8}, {4, 2, 3, 3}, Spec(3, 1, 1, PadMode::kExplicit), "input channels");
  expect_error({1, 3, 8, 8}, {4, 3, 5, 5}, Spec(3, 1, 1, PadMode::kExplicit), "kernel 3x3");
  expect_error({1, 3, 8, 8}, {4, 3, 3, 3}, Spec(3, 0, 1, PadMode::kExplicit), "stride 0");
  expect_error({1, 3, 8, 8}, {4, 3, 3, 3}, Spec(3, 1, -1, PadMode::kExplicit), "pad -1");
  expect_error({1, 3, 2, 8}, {4, 3, 3, 3}, Spec(3, 1, 0, PadMode::kExplicit), "empty output");
}

TEST(ConvDeathTest, MismatchedShapesAbortWithMessage) {
  Tensor x({1, 3, 8, 8}), w({4, 2, 3, 3}), y;
  EXPECT_DEATH(Conv2dForward(x, w, nullptr, Spec(3, 1, 1, PadMode::kExplicit), {}, &y),
               "input channels");
}

TEST(ConvTest, WinogradFallsBackOutsideThreeByThreeStrideOne) {
  auto g1 = *MakeConvGeometry({1, 2, 8, 8}, {2, 2, 3, 3}, Spec(3, 1, 1, PadMode::kExplicit));
  auto g2 = *MakeConvGeometry({1, 2, 8, 8}, {2, 2, 3, 3}, Spec(3, 2, 1, PadMode::kExplicit));
  auto g3 = *MakeConvGeometry({1, 2, 8, 8}, {2, 2, 1, 1}, Spec(1, 1, 0, PadMode::kExplicit));
  EXPECT_EQ(EffectiveConvAlgo(g1, ConvAlgo::kWinograd), ConvAlgo::kWinograd);
  EXPECT_EQ(EffectiveConvAlgo(g2, ConvAlgo::kWinograd), ConvAlgo::kIm2colGemm);
  EXPECT_EQ(EffectiveConvAlgo(g3, ConvAlgo::kWinograd), ConvAlgo::kIm2colGemm);
  EXPECT_EQ(EffectiveConvAlgo(g3, ConvAlgo::kDirect), ConvAlgo::kDirect);
}

// Counts direct-conv outputs whose bits differ from xw::Dot over the terms
// conv.h specifies. Forward: the zero-padded patch in (c, a, b) order.
int ForwardMismatches(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& y,
                      const ReduceSpec& s) {
  const int64_t taps = g.c * g.kh * g.kw;
  std::vector<float> patch(taps);
  int bad = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t p = 0; p < g.oh; ++p)
        for (int64_t q = 0; q < g.ow; ++q) {
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t c = t / (g.kh * g.kw), a = t / g.kw % g.kh, b = t % g.kw;
            const int64_t u = p * g.stride + a - g.pad_top, v = q * g.stride + b - g.pad_left;
            const bool in = u >= 0 && u < g.h && v >= 0 && v < g.w;
            patch[t] = in ? x.at(n, c, u, v) : 0.0f;
          }
          const float ref = Dot(patch.data(), w.data() + o * taps, taps, s);
          const float got = y.at(n, o, p, q);
          bad += std::memcmp(&ref, &got, 4) != 0;
        }
  return bad;
}

// dx: terms (o, a', b') with a' = KH-1-a over the taps of the pixel's stride
// phase, reading dy where the tap lands (zero outside dy).
int DataGradMismatches(const ConvGeometry& g, const Tensor& w, const Tensor& dy,
                       const Tensor& dx, const ReduceSpec& s) {
  auto phase_ok = [&](int64_t v) { return ((v % g.stride) + g.stride) % g.stride == 0; };
  std::vector<float> dyv, wv;
  int bad = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t h = 0; h < g.h; ++h)
        for (int64_t ww = 0; ww < g.w; ++ww) {
          dyv.clear();
          wv.clear();
          for (int64_t t = 0; t < g.o * g.kh * g.kw; ++t) {
            const int64_t o = t / (g.kh * g.kw), a = g.kh - 1 - t / g.kw % g.kh,
                          b = g.kw - 1 - t % g.kw;
            const int64_t up = h + g.pad_top - a, vp = ww + g.pad_left - b;
            if (!phase_ok(up) || !phase_ok(vp)) continue;
            const bool in = up >= 0 && vp >= 0 && up / g.stride < g.oh && vp / g.stride < g.ow;
            dyv.push_back(in ? dy.at(n, o, up / g.stride, vp / g.stride) : 0.0f);
            wv.push_back(w[((o * g.c + c) * g.kh + a) * g.kw + b]);
          }
          const float ref = Dot(dyv.data(), wv.data(), dyv.size(), s);
          const float got = dx.at(n, c, h, ww);
          bad += std::memcmp(&ref, &got, 4) != 0;
        }
  return bad;
}

// Direct convolution is exactly xw::Dot over the zero-padded patch (forward),
// over the flipped taps of dy (dx), and over (n, oh, ow) (dw), for every order;
// the bias gradient is xw::Sum over each channel of dy.
TEST(ConvTest, DirectEqualsDotOverPatchesBitwise) {
  const Case cs[] = {{2, 5, 7, 6, 7, Spec(3, 2, 1, PadMode::kExplicit)},
                     {1, 33, 5, 5, 3, Spec(3, 1, 0, PadMode::kSame)},  // 297 terms: 2 chunks
                     {2, 3, 7, 8, 2, Spec(1, 2, 0, PadMode::kSame)},   // taps-free phases
                     // VGG's 4x4 and 2x2 rows, gathered from a padded copy
                     // (GatherSource): runs of 4 and 2 across images.
                     {3, 20, 4, 4, 8, Spec(3, 1, 1, PadMode::kExplicit)},
                     {5, 8, 2, 2, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                     {1, 2, 9, 10, 3, Spec(4, 3, 1, PadMode::kExplicit)},
                     // Rows of a multiple of the lanes (or half), or a
                     // multiple of the lanes of output channels: the
                     // implicit tiles (conv_implicit_exact.cc), same bits.
                     {2, 3, 4, 16, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 3, 6, 9, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {3, 17, 8, 8, 48, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 4, 16, 16, 32, Spec(3, 2, 0, PadMode::kSame)},
                     // Stride-2 data gradients whose phases the tiles take
                     // (sub-grids 16 wide), and 1x1's taps-free phases.
                     {2, 3, 32, 32, 16, Spec(3, 2, 1, PadMode::kExplicit)},
                     {2, 5, 32, 32, 8, Spec(1, 2, 0, PadMode::kSame)},
                     // Over 1024 taps (forward) and terms (data gradient):
                     // lanesK chains run in blocks of taps, same bits.
                     {1, 120, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {1, 16, 8, 8, 120, Spec(3, 1, 1, PadMode::kExplicit)},
                     // Planes where most taps read padding
                     // (conv_padding_free.cc for sequential orders): a
                     // 1x1 plane, a 5x5 kernel on 3x3, pixels whose every
                     // tap is padding (1x1 kernel, pad 1), and stride 2.
                     {3, 6, 1, 1, 7, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 3, 3, 3, 5, Spec(5, 1, 2, PadMode::kExplicit)},
                     {2, 4, 2, 3, 3, Spec(1, 1, 1, PadMode::kExplicit)},
                     {2, 5, 5, 4, 6, Spec(3, 2, 2, PadMode::kExplicit)}};
  convtest::ForEachTarget([&](const std::string&) {
  for (const Case& k : cs) {
    const auto [g, x, w, dy] = convtest::MakeOperands(k, 3, 4, 5);
    for (const convtest::Config& cfg : convtest::AllConfigs()) {
      if (cfg.num.conv_algo != ConvAlgo::kDirect) continue;
      Tensor y, dx, dw, db;
      Conv2dForward(x, w, nullptr, k.spec, cfg.num, &y);
      Conv2dBackward(x, w, dy, k.spec, cfg.num, &dx, &dw, &db);
      const std::string id = cfg.name + " " + k.Name();
      EXPECT_EQ(ForwardMismatches(g, x, w, y, cfg.num.reduce), 0) << id;
      EXPECT_EQ(DataGradMismatches(g, w, dy, dx, cfg.num.reduce), 0) << id;
      EXPECT_EQ(convtest::FilterGradMismatches(g, x, dy, dw, cfg.num.reduce), 0) << id;
      // The bias gradient (groups of 8 channels on the channel kernels).
      EXPECT_EQ(convtest::BiasGradMismatches(g, dy, db, cfg.num.reduce), 0) << id;
    }
  }
  });
}

// Small planes go to the padding-free products for sequential and lanesK chains,
// by the fraction of taps that read data: 3x3 kernels with pad 1 have
// 10 x 10 of 16 x 9 taps in range on 4x4, 4 x 4 of 4 x 9 on 2x2, 22 x 22
// of 64 x 9 on 8x8.
TEST(ConvTest, PaddingFreeTakesPlanesMostlyPadding) {
  const auto source = [](int64_t side) {
    return kernels::TapSource{nullptr, 8, side, side, 3, 3, 1, 1, 1, side, side};
  };
  EXPECT_DOUBLE_EQ(kernels::InRangeTapFraction(source(4)), 100.0 / 144.0);
  EXPECT_DOUBLE_EQ(kernels::InRangeTapFraction(source(2)), 16.0 / 36.0);
  EXPECT_DOUBLE_EQ(kernels::InRangeTapFraction(source(8)), 484.0 / 576.0);
  EXPECT_DOUBLE_EQ(kernels::InRangeTapFraction(kernels::TapSource{
                       nullptr, 8, 4, 4, 3, 3, 1, 0, 0, 2, 2}),
                   1.0);  // no padding
  const ReduceSpec seq = *ParseReduceOrder("sequential", false);
  EXPECT_TRUE(kernels::PaddingFreeApplies(source(4), seq));
  EXPECT_TRUE(kernels::PaddingFreeApplies(source(2), *ParseReduceOrder("lanes1", true)));
  EXPECT_FALSE(kernels::PaddingFreeApplies(source(8), seq));
  // lanesK chains too (each chain its own product); a tree would put the
  // terms in other places.
  EXPECT_TRUE(kernels::PaddingFreeApplies(source(4), *ParseReduceOrder("lanes8", true)));
  EXPECT_FALSE(kernels::PaddingFreeApplies(source(4), *ParseReduceOrder("pairwise", false)));
  EXPECT_FALSE(kernels::PaddingFreeApplies(source(4), *ParseReduceOrder("kahan", false)));
}

// Every algorithm agrees with a naive double-precision convolution, forward
// and backward, in both padding modes, strides 1 and 2, odd sizes.
TEST(ConvTest, AllAlgorithmsMatchDoubleReference) {
  const Case cs[] = {
      {2, 3, 9, 7, 5, Spec(3, 1, 1, PadMode::kExplicit)},
      {2, 3, 9, 7, 5, Spec(3, 1, 0, PadMode::kSame)},
      {2, 4, 11, 8, 3, Spec(3, 2, 1, PadMode::kExplicit)},
      {2, 4, 11, 8, 3, Spec(3, 2, 0, PadMode::kSame)},
      {3, 6, 5, 5, 4, Spec(1, 1, 0, PadMode::kExplicit)},  // pointwise
      {1, 2, 10, 9, 3, Spec(5, 2, 2, PadMode::kExplicit)},
      {1, 3, 6, 6, 2, Spec(3, 1, 3, PadMode::kExplicit)},  // pad > k-1
      {2, 3, 10, 11, 4, Spec(3, 3, 1, PadMode::kExplicit)},
      {9, 8, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},  // multi-image GEMM groups
      // Winograd: 81 tiles per image, groups of 3 images: 4 groups, one per
      // task (the cases above are fewer groups, run phase by phase).
      {12, 2, 18, 18, 3, Spec(3, 1, 1, PadMode::kExplicit)},
      // Output rows of 16k or 8 pixels: im2col without a patch matrix
      // (conv_implicit.cc), with channel and tap counts that leave partial
      // register tiles, phases for stride 2, TensorFlow's asymmetric pads.
      {2, 3, 16, 16, 5, Spec(3, 1, 1, PadMode::kExplicit)},
      {2, 3, 32, 32, 7, Spec(3, 2, 0, PadMode::kSame)},
      {3, 4, 16, 16, 6, Spec(1, 2, 0, PadMode::kSame)},
      {1, 2, 12, 32, 3, Spec(5, 1, 2, PadMode::kExplicit)},
      {2, 5, 10, 48, 9, Spec(3, 1, 0, PadMode::kSame)},
      // Rows of 8 with 16k output channels: channel-vector tiles.
      {3, 5, 8, 8, 48, Spec(3, 1, 1, PadMode::kExplicit)},
      {2, 16, 16, 16, 32, Spec(3, 2, 0, PadMode::kSame)},
  };
  convtest::ForEachTarget([&](const std::string&) {
  for (const Case& k : cs) {
    const auto [g, x, w, dy] = convtest::MakeOperands(k, 7, 8, 10);
    Tensor b = RandomTensor({k.o}, 9);
    const convtest::Reference ref = convtest::NaiveConv(g, x, w, b, dy);
    for (const convtest::Config& cfg : convtest::AllConfigs()) {
      Tensor y, dx, dw, db;
      Conv2dForward(x, w, &b, k.spec, cfg.num, &y);
      Conv2dBackward(x, w, dy, k.spec, cfg.num, &dx, &dw, &db);
      const std::string id = cfg.name + " " + k.Name();
      EXPECT_TRUE(gradcheck::AllClose("y " + id, y, ref.y, 1e-4, 1e-5));
      EXPECT_TRUE(gradcheck::AllClose("dx " + id, dx, ref.dx, 1e-4, 1e-5));
      EXPECT_TRUE(gradcheck::AllClose("dw " + id, dw, ref.dw, 1e-4, 1e-5));
      EXPECT_TRUE(gradcheck::AllClose("db " + id, db, ref.db, 1e-4, 1e-5));
    }
  }
  });
}

// Where the im2col GEMM runs without a patch matrix, each output is one FMA
// chain over the taps in index order, as Eigen's GEBP kernel accumulates a
// product whose depth fits one block; bias is added after. The stride-1
// data gradient is the same chain over the flipped kernel's taps. Every
// target takes these rows (16, 8 and 32 pixels: whole or half slots of 16,
// 8, 4 or 1 lanes) and gives these bits. So do planes mostly padding (VGG's
// 4x4 and 2x2, a 1x1 plane, a 5x5 kernel on 3x3), which skip the padding
// taps (conv_padding_free.cc). The inputs hold exact zeros (as after a
// ReLU), so that padding and data both give signed-zero terms.
TEST(ConvTest, Im2colWithoutPatchMatrixIsTheTapOrderFmaChain) {
  const Case cs[] = {{2, 3, 16, 16, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                     {9, 8, 8, 8, 13, Spec(3, 1, 1, PadMode::kExplicit)},
                     {3, 5, 8, 8, 48, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 3, 32, 32, 7, Spec(3, 2, 0, PadMode::kSame)},
                     {1, 2, 12, 32, 3, Spec(5, 1, 2, PadMode::kExplicit)},
                     {3, 20, 4, 4, 8, Spec(3, 1, 1, PadMode::kExplicit)},
                     {5, 8, 2, 2, 33, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 6, 1, 1, 7, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 3, 3, 3, 5, Spec(5, 1, 2, PadMode::kExplicit)}};
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kIm2colGemm;
  num.gemm = GemmKind::kEigen;  // the user's ISA-dependent choice; these rows take the tiles
  const ReduceSpec chain = *ParseReduceOrder("sequential", true);
  convtest::ForEachTarget([&](const std::string&) {
  for (const Case& k : cs) {
    auto [g, x, w, dy] = convtest::MakeOperands(k, 11, 12, 13);
    for (int64_t i = 0; i < x.size(); i += 2) x[i] = std::max(x[i], 0.0f);
    for (int64_t i = 1; i < dy.size(); i += 3) dy[i] = 0.0f;
    Tensor y, dx, yb;
    Conv2dForward(x, w, nullptr, k.spec, num, &y);
    EXPECT_EQ(ForwardMismatches(g, x, w, y, chain), 0) << k.Name();
    const Tensor bias = RandomTensor({g.o}, 9);
    Conv2dForward(x, w, &bias, k.spec, num, &yb);
    int bad = 0;
    for (int64_t i = 0; i < y.size(); ++i) {
      const float want = y[i] + bias[i / (g.oh * g.ow) % g.o];
      bad += std::memcmp(&want, &yb[i], 4) != 0;
    }
    EXPECT_EQ(bad, 0) << k.Name() << " with bias";
    if (g.stride == 1) {
      Conv2dBackward(x, w, dy, k.spec, num, &dx, nullptr, nullptr);
      EXPECT_EQ(DataGradMismatches(g, w, dy, dx, chain), 0) << k.Name();
    }
  }
  });
}

// dx of a strided im2col data gradient under gemm "owned", as TF's
// backprop-input computes it: the patch gradient G[t, pixel] = Dot over o of
// w[o, t] * dy[o, pixel] in order `s`, then col2im into a zeroed dx, taps in
// index order (a dx pixel gets at most one output pixel per tap).
int Col2imMismatches(const ConvGeometry& g, const Tensor& w, const Tensor& dy, const Tensor& dx,
                     const ReduceSpec& s) {
  const int64_t taps = g.c * g.kh * g.kw;
  std::vector<float> want(dx.size(), 0.0f), wv(g.o), dyv(g.o);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t c = t / (g.kh * g.kw), a = t / g.kw % g.kh, b = t % g.kw;
      for (int64_t o = 0; o < g.o; ++o) wv[o] = w[o * taps + t];
      for (int64_t p = 0; p < g.oh; ++p)
        for (int64_t q = 0; q < g.ow; ++q) {
          const int64_t u = p * g.stride + a - g.pad_top, v = q * g.stride + b - g.pad_left;
          if (u < 0 || u >= g.h || v < 0 || v >= g.w) continue;
          for (int64_t o = 0; o < g.o; ++o) dyv[o] = dy.at(n, o, p, q);
          want[((n * g.c + c) * g.h + u) * g.w + v] += Dot(wv.data(), dyv.data(), g.o, s);
        }
    }
  int bad = 0;
  for (int64_t i = 0; i < dx.size(); ++i) bad += std::memcmp(&want[i], dx.data() + i, 4) != 0;
  return bad;
}

// The tf profile's im2col (gemm "owned") on every shape, not only those the
// tiles take: each output one sequential chain over its taps in index order,
// fused or not as kernels.fma says (forward, bias added after; stride-1 data
// gradient over the flipped taps), the strided data gradient the chain over
// o and then col2im; the same bits on every SIMD target and thread count.
// ResNet-20 on 28 x 28 images (rows of 28, 14 and 7 pixels, TF's asymmetric
// 'same' padding with stride 2, 1x1 stride-2 projections) and VGG's 4x4 and
// 2x2 planes, which took Eigen's sgemm before, whose order follows the ISA.
TEST(ConvTest, Im2colOwnedIsTheTapChainOnEveryShape) {
  const Case cs[] = {{2, 1, 28, 28, 4, Spec(3, 1, 1, PadMode::kSame)},
                     {3, 4, 28, 28, 8, Spec(3, 2, 0, PadMode::kSame)},
                     {3, 4, 28, 28, 8, Spec(1, 2, 0, PadMode::kSame)},
                     {2, 8, 14, 14, 16, Spec(3, 2, 0, PadMode::kSame)},
                     {3, 16, 7, 7, 16, Spec(3, 1, 1, PadMode::kSame)},
                     {2, 3, 16, 16, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                     {3, 20, 4, 4, 8, Spec(3, 1, 1, PadMode::kExplicit)},
                     {5, 8, 2, 2, 33, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 5, 7, 6, 7, Spec(3, 2, 1, PadMode::kExplicit)}};
  for (bool fma : {false, true}) {
    KernelNumerics num;
    num.conv_algo = ConvAlgo::kIm2colGemm;
    num.gemm = GemmKind::kOwned;
    num.reduce = *ParseReduceOrder("pairwise", fma);  // the chains ignore the order, not fma
    const ReduceSpec chain = *ParseReduceOrder("sequential", fma);
    convtest::ForEachTarget([&](const std::string&) {
      for (int threads : {1, 3}) {
        ThreadScope scope(threads);
        for (const Case& k : cs) {
          auto [g, x, w, dy] = convtest::MakeOperands(k, 31, 32, 33);
          for (int64_t i = 0; i < x.size(); i += 2) x[i] = std::max(x[i], 0.0f);
          const std::string id = k.Name() + (fma ? " fma" : "") + " threads " +
                                 std::to_string(threads);
          const Tensor bias = RandomTensor({g.o}, 9);
          Tensor y, yb, dx;
          Conv2dForward(x, w, nullptr, k.spec, num, &y);
          EXPECT_EQ(ForwardMismatches(g, x, w, y, chain), 0) << id;
          Conv2dForward(x, w, &bias, k.spec, num, &yb);
          int bad = 0;
          for (int64_t i = 0; i < y.size(); ++i) {
            const float want = y[i] + bias[i / (g.oh * g.ow) % g.o];
            bad += std::memcmp(&want, &yb[i], 4) != 0;
          }
          EXPECT_EQ(bad, 0) << id << " with bias";
          Conv2dBackward(x, w, dy, k.spec, num, &dx, nullptr, nullptr);
          if (g.stride == 1) {
            EXPECT_EQ(DataGradMismatches(g, w, dy, dx, chain), 0) << id;
          } else {
            EXPECT_EQ(Col2imMismatches(g, w, dy, dx, chain), 0) << id;
          }
        }
      }
    });
  }
}

// Winograd under gemm "owned": its 16 GEMMs are TapOrder chains over the
// channels, so the output is the same bits on every target and thread
// count, and within a few ulps of the exact convolution.
TEST(ConvTest, WinogradOwnedSameBitsOnEveryTarget) {
  const Case cs[] = {{3, 5, 9, 8, 6, Spec(3, 1, 1, PadMode::kSame)},
                     {2, 16, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)}};
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kWinograd;
  num.gemm = GemmKind::kOwned;
  for (const Case& k : cs) {
    const convtest::Operands op = convtest::MakeOperands(k, 41, 42, 43);
    const Tensor &x = op.x, &w = op.w, &dy = op.dy;
    const Tensor bias = RandomTensor({op.g.o}, 44);
    const convtest::Reference ref = convtest::NaiveConv(op.g, x, w, bias, dy);
    Tensor y0, dx0;
    convtest::ForEachTarget([&](const std::string& target) {
      for (int threads : {1, 3}) {
        ThreadScope scope(threads);
        Tensor y, dx;
        Conv2dForward(x, w, &bias, k.spec, num, &y);
        Conv2dBackward(x, w, dy, k.spec, num, &dx, nullptr, nullptr);
        if (y0.size() == 0) {
          y0 = y;
          dx0 = dx;
          EXPECT_TRUE(gradcheck::AllClose("y " + k.Name(), y, ref.y, 1e-4, 1e-5));
          EXPECT_TRUE(gradcheck::AllClose("dx " + k.Name(), dx, ref.dx, 1e-4, 1e-5));
        }
        EXPECT_TRUE(y.BitwiseEqual(y0)) << k.Name() << " " << target << " " << threads;
        EXPECT_TRUE(dx.BitwiseEqual(dx0)) << k.Name() << " " << target << " " << threads;
      }
    });
  }
}

// On a CPU that splits 512-bit operations, the AVX3 target runs im2col rows
// that 16-float slots do not tile but 8-float ones do (4 pixels wide with
// an even row count, or a multiple of 8) on the AVX2 target's tiles: the
// same tap-order FMA chains, and the fingerprint's target says "+split".
TEST(ConvTest, SplitOpAvx3RunsNarrowRowsOnAvx2Tiles) {
  const std::vector<std::string> targets = KernelTargets();
  const auto has = [&](const char* t) {
    return std::find(targets.begin(), targets.end(), t) != targets.end();
  };
  if (!has("AVX3") || !has("AVX2")) GTEST_SKIP() << "needs a CPU with AVX-512";
  // (4x4 planes, mostly padding, take the padding-free products instead:
  // the same chains.)
  const Case cs[] = {{2, 6, 16, 4, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {1, 3, 5, 24, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                     {2, 64, 8, 4, 8, Spec(3, 1, 1, PadMode::kExplicit)}};  // 576 taps
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kIm2colGemm;
  num.gemm = GemmKind::kEigen;  // the narrow tiles serve gemm "eigen" only
  const ReduceSpec chain = *ParseReduceOrder("sequential", true);
  ASSERT_TRUE(SetKernelTarget("AVX3").ok());
  for (int split : {1, 0}) {
    kernels::SetSplitWideOpsTiles(split);
    EXPECT_EQ(KernelTargetVariant(), split ? "AVX3+split" : "AVX3");
    for (const Case& k : cs) {
      const auto [g, x, w, dy] = convtest::MakeOperands(k, 21, 22, 23);
      EXPECT_EQ(kernels::NarrowImplicitApplies(kernels::ForwardSource(g, x.data())), split == 1)
          << k.Name();
      if (!split) continue;
      Tensor y, dx;
      Conv2dForward(x, w, nullptr, k.spec, num, &y);
      EXPECT_EQ(ForwardMismatches(g, x, w, y, chain), 0) << k.Name();
      Conv2dBackward(x, w, dy, k.spec, num, &dx, nullptr, nullptr);
      EXPECT_EQ(DataGradMismatches(g, w, dy, dx, chain), 0) << k.Name();
    }
  }
  kernels::SetSplitWideOpsTiles(-1);
  ASSERT_TRUE(SetKernelTarget("").ok());
}

TEST(ConvTest, BiasIsAddedOnceAfterTheReduction) {
  Tensor x = RandomTensor({2, 3, 6, 6}, 1), w = RandomTensor({4, 3, 3, 3}, 2);
  Tensor b = RandomTensor({4}, 3);
  for (const convtest::Config& cfg : convtest::AlgoConfigs()) {
    Tensor with, without;
    Conv2dForward(x, w, &b, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &with);
    Conv2dForward(x, w, nullptr, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &without);
    for (int64_t i = 0; i < with.size(); ++i) {
      ASSERT_EQ(with[i], without[i] + b[(i / 36) % 4]) << cfg.name << " " << i;
    }
  }
}

TEST(ConvTest, OutputsAreResizedAndOverwritten) {
  Tensor x = RandomTensor({1, 2, 5, 5}, 1), w = RandomTensor({3, 2, 3, 3}, 2);
  Tensor dy = RandomTensor({1, 3, 5, 5}, 3);
  for (const convtest::Config& cfg : convtest::AlgoConfigs()) {
    Tensor y({7}, 5.0f), dx({1, 2, 5, 5}, 9.0f), dw({3, 2, 3, 3}, 9.0f), db({3}, 9.0f);
    Tensor fy, fdx, fdw, fdb;
    Conv2dForward(x, w, nullptr, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &y);
    Conv2dForward(x, w, nullptr, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &fy);
    Conv2dBackward(x, w, dy, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &dx, &dw, &db);
    Conv2dBackward(x, w, dy, Spec(3, 1, 1, PadMode::kExplicit), cfg.num, &fdx, &fdw, &fdb);
    EXPECT_TRUE(y.BitwiseEqual(fy)) << cfg.name;
    EXPECT_TRUE(dx.BitwiseEqual(fdx)) << cfg.name;
    EXPECT_TRUE(dw.BitwiseEqual(fdw)) << cfg.name;
    EXPECT_TRUE(db.BitwiseEqual(fdb)) << cfg.name;
  }
}

}  // namespace
}  // namespace xw
