#include "xwires/core/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "grad_check.h"
#include "xwires/core/parallel.h"

namespace xw::layer_test {
namespace {

const LossSpec kFused{LossNumerics::kFusedLogSoftmax};
const LossSpec kClipped{LossNumerics::kClippedSoftmax};

Tensor FromValues(Shape shape, const std::vector<float>& v) {
  Tensor t(std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

TEST(LossTest, HandComputedValuesBothNumerics) {
  // Row 0: -log softmax([1,2,3])[2] = log(1 + e^-1 + e^-2); row 1: log 3.
  Tensor logits = FromValues({2, 3}, {1, 2, 3, 0, 0, 0});
  const int32_t labels[] = {2, 1};
  const double l0 = std::log(1 + std::exp(-1.0) + std::exp(-2.0)),
               l1 = std::log(3.0);
  const double sm[3] = {std::exp(-l0 - 2), std::exp(-l0 - 1), std::exp(-l0)};
  for (const LossSpec& spec : {kFused, kClipped}) {
    SCOPED_TRACE(static_cast<int>(spec.numerics));
    Tensor d;
    std::vector<float> per;
    Result<float> loss =
        SoftmaxCrossEntropy(logits, labels, spec, {}, &d, &per);
    ASSERT_TRUE(loss.ok());
    EXPECT_NEAR(*loss, (l0 + l1) / 2, 1e-6);
    ASSERT_EQ(per.size(), 2u);
    EXPECT_NEAR(per[0], l0, 1e-6);
    EXPECT_NEAR(per[1], l1, 1e-6);
    // d(mean)/dx = (softmax - onehot) / N.
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(d[j], (sm[j] - (j == 2)) / 2, 1e-7) << j;
      EXPECT_NEAR(d[3 + j], (1.0 / 3 - (j == 1)) / 2, 1e-7) << j;
    }
  }
}

TEST(LossTest, ClipCapsTheLossAndZeroesTheGradient) {
  // p[0] = e^-30 / (1 + e^-30) ~ 9e-14 < 1e-7: clipped.
  Tensor logits = FromValues({2, 2}, {0, 30, 0, 30});
  const int32_t labels[] = {0, 1};
  Tensor d;
  std::vector<float> per;
  Result<float> loss =
      SoftmaxCrossEntropy(logits, labels, kClipped, {}, &d, &per);
  ASSERT_TRUE(loss.ok());
  EXPECT_NEAR(per[0], -std::log(1e-7), 1e-5);  // ~16.118
  EXPECT_NEAR(per[0], 16.118, 1e-3);
  // Confident and right: p[1] > 1 - eps is clipped to 1 - eps, which in float
  // is 1 - 2^-23 (the float below 1 nearest 1 - 1e-7).
  EXPECT_EQ(1.0f - 1e-7f, 1.0f - std::ldexp(1.0f, -23));
  EXPECT_NEAR(per[1], -std::log(static_cast<double>(1.0f - 1e-7f)), 1e-12);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(d[j], 0.0f) << j;
  // The fused path neither caps the loss nor zeroes the gradient.
  ASSERT_TRUE(SoftmaxCrossEntropy(logits, labels, kFused, {}, &d, &per).ok());
  EXPECT_NEAR(per[0], 30.0, 1e-5);
  EXPECT_NEAR(d[0], -0.5, 1e-6);
  EXPECT_NEAR(d[1], 0.5, 1e-6);
}

TEST(LossTest, NumericsAgreeWhenWellConditionedAndDifferWhenExtreme) {
  Tensor logits = RandomTensor({16, 10}, 41, -2.0f, 2.0f);
  std::vector<int32_t> labels(16);
  for (int i = 0; i < 16; ++i) labels[i] = (i * 7) % 10;
  Tensor df, dc;
  const float lf = *SoftmaxCrossEntropy(logits, labels.data(), kFused, {}, &df);
  const float lc =
      *SoftmaxCrossEntropy(logits, labels.data(), kClipped, {}, &dc);
  EXPECT_NEAR(lf, lc, 1e-5 * lf);
  for (int64_t i = 0; i < df.size(); ++i) ASSERT_NEAR(df[i], dc[i], 1e-7) << i;

  Tensor extreme = FromValues({1, 3}, {-20, 20, 0});
  const int32_t wrong[] = {0};
  const float ef = *SoftmaxCrossEntropy(extreme, wrong, kFused, {}, nullptr);
  const float ec = *SoftmaxCrossEntropy(extreme, wrong, kClipped, {}, nullptr);
  EXPECT_NEAR(ef, 40.0f, 1e-4);
  EXPECT_NEAR(ec, 16.118f, 1e-3);
}

TEST(LossTest, FiniteDifferenceGradientsBothNumerics) {
  for (const LossSpec& spec : {kFused, kClipped}) {
    SCOPED_TRACE(static_cast<int>(spec.numerics));
    Tensor logits = RandomTensor({4, 5}, 42, -2.0f, 2.0f);
    const int32_t labels[] = {0, 4, 2, 2};
    Tensor d;
    ASSERT_TRUE(SoftmaxCrossEntropy(logits, labels, spec, {}, &d).ok());
    auto loss = [&] {
      return static_cast<double>(
          *SoftmaxCrossEntropy(logits, labels, spec, {}, nullptr));
    };
    GradCheckOptions opt;
    opt.atol = 2e-4;
    opt.max_checks = 0;
    EXPECT_TRUE(CheckGradient("dlogits", &logits, d, loss, opt));
  }
}

TEST(LossTest, BitwiseIdenticalForOneTwoFourThreads) {
  Tensor logits = RandomTensor({300, 10}, 43, -8.0f, 8.0f);
  std::vector<int32_t> labels(300);
  for (int i = 0; i < 300; ++i) labels[i] = (i * 3) % 10;
  for (const LossSpec& spec : {kFused, kClipped}) {
    for (const char* order : {"sequential", "pairwise", "lanes8"}) {
      const ReduceSpec reduce = *ParseReduceOrder(order);
      std::vector<float> losses;
      std::vector<Tensor> grads;
      for (int threads : {1, 2, 4}) {
        ThreadScope scope(threads);
        Tensor d;
        std::vector<float> per;
        losses.push_back(*SoftmaxCrossEntropy(logits, labels.data(), spec,
                                              reduce, &d, &per));
        grads.push_back(d);
        // The batch mean is Sum(per-sample, reduce) / N.
        EXPECT_EQ(losses.back(), Sum(per.data(), 300, reduce) / 300.0f)
            << order;
      }
      for (int t = 1; t < 3; ++t) {
        EXPECT_EQ(std::memcmp(&losses[0], &losses[t], sizeof(float)), 0)
            << order << " " << t;
        EXPECT_TRUE(grads[0].BitwiseEqual(grads[t])) << order << " " << t;
      }
    }
  }
}

TEST(LossTest, BadInputIsRejected) {
  Tensor logits({3, 4});
  const int32_t labels[] = {0, 4, 1};
  Tensor d({7});
  Result<float> r = SoftmaxCrossEntropy(logits, labels, kFused, {}, &d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("label 4 of sample 1"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(d.shape(), (Shape{7}));  // outputs untouched on failure
  const int32_t negative[] = {0, 1, -1};
  EXPECT_FALSE(
      SoftmaxCrossEntropy(logits, negative, kClipped, {}, nullptr).ok());
  EXPECT_FALSE(SoftmaxCrossEntropy(logits, nullptr, kFused, {}, nullptr).ok());
  EXPECT_FALSE(
      SoftmaxCrossEntropy(Tensor({12}), labels, kFused, {}, nullptr).ok());
  LossSpec bad_eps = kClipped;
  bad_eps.clip_eps = 0.0f;
  const int32_t ok_labels[] = {0, 1, 2};
  EXPECT_FALSE(
      SoftmaxCrossEntropy(logits, ok_labels, bad_eps, {}, nullptr).ok());
}

}  // namespace
}  // namespace xw::layer_test
