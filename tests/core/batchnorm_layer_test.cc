#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "grad_check.h"
#include "xwires/core/activation.h"
#include "xwires/core/batchnorm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor_ops.h"

namespace xw::layer_test {
namespace {

Tensor FromValues(Shape shape, const std::vector<float>& v) {
  Tensor t(std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

TEST(BatchNormLayerTest, TorchRunningStatsUpdate) {
  // One channel, values 1..4: mean 2.5, biased var 1.25, unbiased 5/3.
  Tensor x = FromValues({4, 1}, {1, 2, 3, 4});
  Tensor gamma({1}, 1.0f), beta({1}, 0.0f), y, rm({1}, 0.0f), rv({1}, 1.0f);
  BatchNormCache cache;
  BatchNormSpec torch;  // momentum 0.1, unbiased, lerp
  ASSERT_TRUE(
      BatchNormForwardTrain(x, gamma, beta, torch, {}, &y, &rm, &rv, &cache)
          .ok());
  EXPECT_FLOAT_EQ(rm[0], 0.25f);
  EXPECT_FLOAT_EQ(rv[0], 0.9f + 0.1f * (5.0f / 3.0f));
  EXPECT_FLOAT_EQ(cache.mean[0], 2.5f);
  EXPECT_FLOAT_EQ(cache.invstd[0], 1.0f / std::sqrt(1.25f + 1e-5f));
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(y[i], (i + 1 - 2.5) / std::sqrt(1.25 + 1e-5), 1e-6) << i;
  }
}

TEST(BatchNormLayerTest, KerasStyleRunningStatsUpdate) {
  Tensor x = FromValues({4, 1}, {1, 2, 3, 4});
  Tensor gamma({1}, 1.0f), beta({1}, 0.0f), y, rm({1}, 0.0f), rv({1}, 1.0f);
  BatchNormCache cache;
  BatchNormSpec keras;
  keras.eps = 1e-3f;
  keras.momentum = 0.01f;  // Keras momentum 0.99
  keras.unbiased_running_var = false;
  keras.update = RunningUpdate::kSubtract;
  ASSERT_TRUE(
      BatchNormForwardTrain(x, gamma, beta, keras, {}, &y, &rm, &rv, &cache)
          .ok());
  EXPECT_FLOAT_EQ(rm[0], 0.025f);
  EXPECT_FLOAT_EQ(rv[0], 1.0025f);
  EXPECT_FLOAT_EQ(cache.invstd[0], 1.0f / std::sqrt(1.25f + 1e-3f));
}

TEST(BatchNormLayerTest, StatisticsFollowTheReduceSpec) {
  // 1e8 swallows the first 1 in a sequential sum (7) but not in Kahan's (8).
  Tensor x = FromValues({10, 1}, {1e8f, 1, -1e8f, 1, 1, 1, 1, 1, 1, 1});
  Tensor gamma({1}, 1.0f), beta({1}, 0.0f), y;
  BatchNormCache seq, kahan;
  ASSERT_TRUE(
      BatchNormForwardTrain(x, gamma, beta, {}, {}, &y, nullptr, nullptr, &seq)
          .ok());
  ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {},
                                    *ParseReduceOrder("kahan"), &y, nullptr,
                                    nullptr, &kahan)
                  .ok());
  EXPECT_EQ(seq.mean[0], 7.0f / 10.0f);
  EXPECT_EQ(kahan.mean[0], 8.0f / 10.0f);
}

TEST(BatchNormLayerTest, Rank4ForwardMatchesDoubleReference) {
  Tensor x = RandomTensor({3, 2, 4, 5}, 1, -2.0f, 3.0f);
  Tensor gamma = FromValues({2}, {0.5f, -1.5f}),
         beta = FromValues({2}, {0.25f, 2.0f});
  Tensor y;
  BatchNormCache cache;
  ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, {}, &y, nullptr,
                                    nullptr, &cache)
                  .ok());
  ASSERT_EQ(y.shape(), x.shape());
  for (int c = 0; c < 2; ++c) {
    double mean = 0, var = 0;
    for (int n = 0; n < 3; ++n)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 5; ++w) mean += x.at(n, c, h, w);
    mean /= 60;
    for (int n = 0; n < 3; ++n)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 5; ++w) var += std::pow(x.at(n, c, h, w) - mean, 2);
    var /= 60;
    for (int n = 0; n < 3; ++n)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 5; ++w) {
          const double ref =
              (x.at(n, c, h, w) - mean) / std::sqrt(var + 1e-5) * gamma[c] +
              beta[c];
          EXPECT_NEAR(y.at(n, c, h, w), ref, 2e-6)
              << c << " " << n << " " << h << " " << w;
        }
  }
}

TEST(BatchNormLayerTest, EvalUsesRunningStats) {
  Tensor x = RandomTensor({2, 3, 2, 2}, 2);
  Tensor gamma = FromValues({3}, {1.0f, 2.0f, 0.5f}),
         beta = FromValues({3}, {0.0f, -1.0f, 3.0f});
  Tensor rm = FromValues({3}, {0.5f, -0.25f, 1.0f}),
         rv = FromValues({3}, {4.0f, 0.25f, 1.0f});
  BatchNormSpec spec;
  Tensor y;
  ASSERT_TRUE(BatchNormForwardEval(x, gamma, beta, rm, rv, spec, &y).ok());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i) {
        const double ref = (x.at(n, c, i / 2, i % 2) - rm[c]) /
                               std::sqrt(rv[c] + 1e-5) * gamma[c] +
                           beta[c];
        EXPECT_NEAR(y.at(n, c, i / 2, i % 2), ref, 1e-5);
      }
  // Batch statistics would give a different output.
  Tensor y_train;
  BatchNormCache cache;
  ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, spec, {}, &y_train, nullptr,
                                    nullptr, &cache)
                  .ok());
  EXPECT_GT(std::fabs(y_train[0] - y[0]), 1e-2);
  // In place is allowed in eval mode.
  Tensor inplace = x;
  ASSERT_TRUE(
      BatchNormForwardEval(inplace, gamma, beta, rm, rv, spec, &inplace).ok());
  EXPECT_TRUE(inplace.BitwiseEqual(y));
}

// Finite differences of L = sum(y * r) against the analytic dx, dgamma, dbeta.
void CheckBatchNormGradients(const Shape& shape) {
  const int64_t c = shape[1];
  Tensor x = RandomTensor(shape, 3, -1.0f, 2.0f);
  Tensor gamma = RandomTensor({c}, 4, 0.5f, 1.5f), beta = RandomTensor({c}, 5);
  ReduceSpec reduce;
  Tensor y;
  BatchNormCache cache;
  ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &y, nullptr,
                                    nullptr, &cache)
                  .ok());
  Tensor r = RandomTensor(y.shape(), 6);
  Tensor dx, dgamma, dbeta;
  ASSERT_TRUE(
      BatchNormBackward(x, gamma, r, cache, reduce, &dx, &dgamma, &dbeta).ok());
  auto loss = [&] {
    Tensor out;
    BatchNormCache tmp;
    EXPECT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &out, nullptr,
                                      nullptr, &tmp)
                    .ok());
    return WeightedSum(out, r);
  };
  GradCheckOptions opt;
  opt.eps = 1e-2;
  opt.atol = 2e-3;
  EXPECT_TRUE(CheckGradient("dx", &x, dx, loss, opt));
  EXPECT_TRUE(CheckGradient("dgamma", &gamma, dgamma, loss, opt));
  EXPECT_TRUE(CheckGradient("dbeta", &beta, dbeta, loss, opt));
  // Null outputs are skipped, the others are unchanged.
  Tensor dx_only;
  ASSERT_TRUE(
      BatchNormBackward(x, gamma, r, cache, reduce, &dx_only, nullptr, nullptr)
          .ok());
  EXPECT_TRUE(dx_only.BitwiseEqual(dx));
}

TEST(BatchNormLayerTest, GradientsRank2) { CheckBatchNormGradients({6, 3}); }
TEST(BatchNormLayerTest, GradientsRank4) {
  CheckBatchNormGradients({3, 2, 2, 3});
}

// The sequential order reads channels in place, several chains at once; its
// statistics must be the bits of gathering each channel and calling Sum/Dot.
// On every SIMD target, sequential, pairwise and lanes8: on targets with 8
// float lanes the group of 8 channels runs on in-register 8 x 8 transposes
// (planes of 9 and 100 pixels: blocks of 8 and a tail, pairwise leaves
// across planes; 4 planes of 256: the pairwise tree's in-plane blocks;
// lanes8 on planes of 16 and 256), elsewhere through transposed blocks of
// 64 pixels in memory or in place; the group of 3 is read in place.
TEST(BatchNormLayerTest,
     ChannelStatisticsMatchPerChannelSumAndDotOnEveryTarget) {
  struct Case {
    int64_t n, side;
  };
  for (const std::string& target : KernelTargets()) {
    SCOPED_TRACE(target);
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (const char* order : {"sequential", "pairwise", "lanes8"}) {
      SCOPED_TRACE(order);
      for (const Case cs : {Case{5, 3}, Case{5, 4}, Case{5, 10}, Case{4, 16}}) {
        // 11 channels: a group of 8 and one of 3.
        const int64_t n = cs.n, side = cs.side, c = 11, s = side * side;
        Tensor x = RandomTensor({n, c, side, side}, 11, -3.0f, 5.0f);
        Tensor gamma = RandomTensor({c}, 12), beta = RandomTensor({c}, 13);
        Tensor dy = RandomTensor(x.shape(), 14);
        for (bool fma : {false, true}) {
          const ReduceSpec reduce = *ParseReduceOrder(order, fma);
          Tensor y, dx, dg, db;
          BatchNormCache cache;
          ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &y,
                                            nullptr, nullptr, &cache)
                          .ok());
          ASSERT_TRUE(
              BatchNormBackward(x, gamma, dy, cache, reduce, &dx, &dg, &db)
                  .ok());
          for (int64_t ch = 0; ch < c; ++ch) {
            std::vector<float> xc(n * s), g(n * s);
            for (int64_t i = 0; i < n; ++i) {
              for (int64_t k = 0; k < s; ++k) {
                xc[i * s + k] = x[(i * c + ch) * s + k];
                g[i * s + k] = dy[(i * c + ch) * s + k];
              }
            }
            const float mean =
                Sum(xc.data(), n * s, reduce) / static_cast<float>(n * s);
            for (float& v : xc) v -= mean;
            const float var = Dot(xc.data(), xc.data(), n * s, reduce) /
                              static_cast<float>(n * s);
            EXPECT_EQ(cache.mean[ch], mean)
                << "channel " << ch << " fma " << fma;
            EXPECT_EQ(cache.invstd[ch], 1.0f / std::sqrt(var + 1e-5f))
                << "channel " << ch;
            EXPECT_EQ(db[ch], Sum(g.data(), n * s, reduce)) << "channel " << ch;
            EXPECT_EQ(dg[ch], Dot(xc.data(), g.data(), n * s, reduce) *
                                  cache.invstd[ch])
                << "channel " << ch << " side " << side;
          }
        }
      }
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

class BatchNormThreadsTest : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(Orders, BatchNormThreadsTest,
                         ::testing::Values("pairwise", "sequential", "lanes8"));

TEST_P(BatchNormThreadsTest, BitwiseIdenticalForOneTwoFourThreads) {
  Tensor x = RandomTensor({8, 16, 6, 6}, 7, -3.0f, 5.0f);
  Tensor gamma = RandomTensor({16}, 8), beta = RandomTensor({16}, 9);
  Tensor dy = RandomTensor(x.shape(), 10);
  ReduceSpec reduce = *ParseReduceOrder(GetParam());
  std::vector<Tensor> outs;
  for (int threads : {1, 2, 4}) {
    ThreadScope scope(threads);
    Tensor y, rm({16}, 0.0f), rv({16}, 1.0f), dx, dg, db;
    BatchNormCache cache;
    ASSERT_TRUE(
        BatchNormForwardTrain(x, gamma, beta, {}, reduce, &y, &rm, &rv, &cache)
            .ok());
    ASSERT_TRUE(
        BatchNormBackward(x, gamma, dy, cache, reduce, &dx, &dg, &db).ok());
    for (Tensor* t : {&y, &rm, &rv, &dx, &dg, &db}) outs.push_back(*t);
  }
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(outs[i].BitwiseEqual(outs[6 + i]))
        << "output " << i << ", 2 threads";
    EXPECT_TRUE(outs[i].BitwiseEqual(outs[12 + i]))
        << "output " << i << ", 4 threads";
  }
}

// The fused epilogue (residual add, ReLU, both) against the separate ops
// on the unfused output, bit for bit: 11 channels (a vector group and a
// partial one), every order, values of both signs, a NaN in the residual
// (ReluForward lets it pass), and y written in place over the residual.
TEST(BatchNormLayerTest, EpilogueEqualsSeparateOpsBitwise) {
  const Tensor x = RandomTensor({4, 11, 8, 8}, 21, -3.0f, 5.0f);
  const Tensor gamma = RandomTensor({11}, 22), beta = RandomTensor({11}, 23);
  Tensor res = RandomTensor(x.shape(), 24, -2.0f, 2.0f);
  res[5] = std::nanf("");
  for (const char* order : {"sequential", "pairwise", "lanes8"}) {
    for (bool fma : {false, true}) {
      SCOPED_TRACE(std::string(order) + (fma ? " fma" : ""));
      const ReduceSpec reduce = *ParseReduceOrder(order, fma);
      Tensor plain;
      BatchNormCache cache;
      ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &plain,
                                        nullptr, nullptr, &cache)
                      .ok());
      Tensor want_relu, want_add, want_both;
      ASSERT_TRUE(ReluForward(plain, &want_relu).ok());
      ASSERT_TRUE(AddForward(plain, res, &want_add).ok());
      ASSERT_TRUE(AddReluForward(plain, res, &want_both).ok());
      struct Case {
        BatchNormEpilogue e;
        const Tensor* want;
      };
      for (const Case& c :
           {Case{{nullptr, true}, &want_relu}, Case{{&res, false}, &want_add},
            Case{{&res, true}, &want_both}}) {
        Tensor y;
        ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &y,
                                          nullptr, nullptr, &cache, c.e)
                        .ok());
        EXPECT_TRUE(y.BitwiseEqual(*c.want))
            << "residual " << (c.e.residual != nullptr) << " relu " << c.e.relu;
      }
      Tensor in_place = res;  // y aliases the residual
      ASSERT_TRUE(BatchNormForwardTrain(x, gamma, beta, {}, reduce, &in_place,
                                        nullptr, nullptr, &cache,
                                        {&in_place, true})
                      .ok());
      EXPECT_TRUE(in_place.BitwiseEqual(want_both));
    }
  }
  EXPECT_TRUE(std::isnan(res[5]));
}

TEST(BatchNormLayerTest, EpilogueResidualIsCheckedAndStateKept) {
  const Tensor x = RandomTensor({2, 3, 4, 4}, 31);
  Tensor gamma({3}, 1.0f), beta({3}, 0.0f), y, rm({3}, 0.5f), rv({3}, 2.0f);
  BatchNormCache cache;
  const Tensor wrong({2, 3, 4, 5});
  Status s = BatchNormForwardTrain(x, gamma, beta, {}, {}, &y, &rm, &rv, &cache,
                                   {&wrong, true});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("residual"), std::string::npos) << s.message();
  s = BatchNormForwardTrain(x, gamma, beta, {}, {}, &y, &rm, &rv, &cache,
                            {&x, false});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("alias"), std::string::npos) << s.message();
  EXPECT_EQ(rm[1], 0.5f);  // running stats untouched by the failed calls
  EXPECT_EQ(rv[1], 2.0f);
}

TEST(BatchNormLayerTest, BadInputIsRejectedAndStateKept) {
  Tensor gamma({3}, 1.0f), beta({3}, 0.0f), y, rm({3}, 0.5f), rv({3}, 2.0f);
  BatchNormCache cache;
  Tensor x3({2, 3, 4});
  Status s =
      BatchNormForwardTrain(x3, gamma, beta, {}, {}, &y, &rm, &rv, &cache);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[2, 3, 4]"), std::string::npos) << s.message();
  Tensor x({2, 4, 1, 1});  // 4 channels vs gamma [3]
  s = BatchNormForwardTrain(x, gamma, beta, {}, {}, &y, &rm, &rv, &cache);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("gamma"), std::string::npos) << s.message();
  Tensor single({1, 3}, 1.0f);  // one value per channel: unbiased var undefined
  s = BatchNormForwardTrain(single, gamma, beta, {}, {}, &y, &rm, &rv, &cache);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(rm[0], 0.5f);  // running stats untouched by every failed call
  EXPECT_EQ(rv[2], 2.0f);
  s = BatchNormBackward(Tensor({2, 3}), gamma, Tensor({3, 3}), cache, {}, &y,
                        nullptr, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xw::layer_test
