#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "grad_check.h"
#include "xwires/core/parallel.h"
#include "xwires/core/pooling.h"
#include "xwires/core/simd_target.h"

namespace xw::layer_test {
namespace {

Tensor FromValues(Shape shape, const std::vector<float>& v) {
  Tensor t(std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

// Distinct values spaced 0.05 apart in a scrambled order, so no max-pool
// window has a near-tie that a finite-difference step could flip.
Tensor DistinctTensor(const Shape& shape) {
  Tensor t(shape);
  const int64_t n = t.size();
  for (int64_t i = 0; i < n; ++i)
    t[i] = 0.05f * static_cast<float>((i * 37) % n) - 1.0f;
  return t;
}

TEST(PoolingLayerTest, MaxPoolKnownValuesTiesAndIndices) {
  Tensor x = FromValues({1, 1, 4, 4}, {1, 3, 2, 2,    //
                                       3, 0, 2, 2,    //
                                       -1, -2, 5, 6,  //
                                       -3, -4, 7, 6});
  Tensor y;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, Pool2dSpec::Square(2, 2), &y, &idx).ok());
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y[0], 3);
  EXPECT_EQ(idx[0], 1);  // tie 3 at (0,1) and (1,0): first in row-major order
  EXPECT_EQ(y[1], 2);
  EXPECT_EQ(idx[1], 2);  // four-way tie: the first
  EXPECT_EQ(y[2], -1);
  EXPECT_EQ(idx[2], 8);
  EXPECT_EQ(y[3], 7);
  EXPECT_EQ(idx[3], 14);
}

TEST(PoolingLayerTest, MaxPoolPaddingNeverWins) {
  Tensor x({1, 1, 3, 3}, -5.0f);
  x[4] = -1.0f;
  Tensor y;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, Pool2dSpec::Square(3, 1, 1), &y, &idx).ok());
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(y[i], -1.0f) << i;  // not the 0 of padding
  Tensor one({1, 1, 3, 3}, -5.0f);
  ASSERT_TRUE(
      MaxPool2dForward(one, Pool2dSpec::Square(2, 2, 1), &y, &idx).ok());
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], -5.0f) << i;
}

TEST(PoolingLayerTest, MaxPoolNanPropagates) {
  Tensor x = FromValues({1, 1, 2, 2}, {1, NAN, 3, 2});
  Tensor y;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, Pool2dSpec::Square(2, 2), &y, &idx).ok());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(idx[0], 1);
}

// 2x2 windows of stride 2 (the common case, vectors of outputs on the
// dispatched SIMD target) against a naive first-maximum scan, on every
// target, with rows of whole vectors and a tail, many ties and some NaNs.
TEST(PoolingLayerTest, MaxPoolTwoByTwoMatchesNaiveScanOnEveryTarget) {
  const int64_t n = 2, c = 2, h = 7, w = 41, oh = 3, ow = 20;
  Tensor x({n, c, h, w});
  for (int64_t i = 0; i < x.size(); ++i) {
    x[i] = (i % 23 == 5) ? NAN : static_cast<float>((i * 7919) % 5) - 2.0f;
  }
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    Tensor y;
    std::vector<int32_t> idx;
    ASSERT_TRUE(MaxPool2dForward(x, Pool2dSpec::Square(2, 2), &y, &idx).ok());
    ASSERT_EQ(y.shape(), (Shape{n, c, oh, ow}));
    for (int64_t p = 0; p < n * c; ++p) {
      const float* in = x.data() + p * h * w;
      for (int64_t r = 0; r < oh; ++r) {
        for (int64_t q = 0; q < ow; ++q) {
          int64_t best = -1;
          for (int64_t a = 0; a < 2; ++a) {
            for (int64_t b = 0; b < 2; ++b) {
              const int64_t at = (2 * r + a) * w + 2 * q + b;
              if (best < 0 ||
                  (!std::isnan(in[best]) && (std::isnan(in[at]) || in[at] > in[best]))) {
                best = at;
              }
            }
          }
          const int64_t o = (p * oh + r) * ow + q;
          EXPECT_EQ(idx[o], best) << target << " " << o;
          EXPECT_EQ(std::isnan(y[o]), std::isnan(in[best])) << target << " " << o;
          if (!std::isnan(in[best])) {
            EXPECT_EQ(y[o], in[best]) << target << " " << o;
          }
        }
      }
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

TEST(PoolingLayerTest, AvgPoolCountIncludePadBothWays) {
  Tensor x({1, 1, 3, 3}, 1.0f);
  Tensor y;
  ASSERT_TRUE(
      AvgPool2dForward(x, Pool2dSpec::Square(3, 1, 1, true), {}, &y).ok());
  EXPECT_FLOAT_EQ(y[0], 4.0f / 9.0f);  // corner: 4 real of 9
  EXPECT_FLOAT_EQ(y[1], 6.0f / 9.0f);  // edge
  EXPECT_FLOAT_EQ(y[4], 1.0f);         // centre
  ASSERT_TRUE(
      AvgPool2dForward(x, Pool2dSpec::Square(3, 1, 1, false), {}, &y).ok());
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(y[i], 1.0f) << i;
  Tensor r = FromValues({1, 1, 2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(AvgPool2dForward(r, Pool2dSpec::Square(2, 2), {}, &y).ok());
  EXPECT_FLOAT_EQ(y[0], 2.5f);
}

TEST(PoolingLayerTest, SamePaddingMatchesTensorFlow) {
  int before = -1, after = -1;
  TfSamePads(32, 3, 2, &before, &after);  // out 16: total 1, all at the end
  EXPECT_EQ(before, 0);
  EXPECT_EQ(after, 1);
  TfSamePads(5, 3, 1, &before, &after);
  EXPECT_EQ(before, 1);
  EXPECT_EQ(after, 1);
  TfSamePads(32, 2, 2, &before, &after);
  EXPECT_EQ(before + after, 0);
  Pool2dSpec spec = Pool2dSpec::Square(3, 2);
  TfSamePads(32, 3, 2, &spec.pad_top, &spec.pad_bottom);
  TfSamePads(32, 3, 2, &spec.pad_left, &spec.pad_right);
  EXPECT_EQ(*Pool2dOutputShape({2, 3, 32, 32}, spec), (Shape{2, 3, 16, 16}));
}

struct PoolCase {
  const char* name;
  Shape shape;
  Pool2dSpec spec;
};

std::vector<PoolCase> PoolCases() {
  Pool2dSpec asym = Pool2dSpec::Square(3, 2);
  asym.pad_bottom = 1;
  asym.pad_right = 2;
  return {
      {"k2s2", {2, 2, 4, 4}, Pool2dSpec::Square(2, 2)},
      {"k3s2p1 overlapping", {1, 2, 5, 5}, Pool2dSpec::Square(3, 2, 1)},
      {"k3s1p1 include pad", {1, 1, 4, 3}, Pool2dSpec::Square(3, 1, 1, true)},
      {"k3s1p1 exclude pad", {1, 1, 4, 3}, Pool2dSpec::Square(3, 1, 1, false)},
      {"asymmetric pad", {1, 2, 5, 6}, asym}};
}

TEST(PoolingLayerTest, MaxPoolGradients) {
  for (const PoolCase& c : PoolCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = DistinctTensor(c.shape), y, dx;
    std::vector<int32_t> idx;
    ASSERT_TRUE(MaxPool2dForward(x, c.spec, &y, &idx).ok());
    Tensor r = RandomTensor(y.shape(), 11);
    ASSERT_TRUE(MaxPool2dBackward(r, idx, x.shape(), c.spec, &dx).ok());
    auto loss = [&] {
      Tensor out;
      std::vector<int32_t> tmp;
      EXPECT_TRUE(MaxPool2dForward(x, c.spec, &out, &tmp).ok());
      return WeightedSum(out, r);
    };
    GradCheckOptions opt;
    opt.eps = 1e-2;  // < half the 0.05 spacing: no argmax flips
    opt.max_checks = 0;
    EXPECT_TRUE(CheckGradient("dx", &x, dx, loss, opt));
  }
}

TEST(PoolingLayerTest, AvgPoolGradients) {
  for (const PoolCase& c : PoolCases()) {
    SCOPED_TRACE(c.name);
    Tensor x = RandomTensor(c.shape, 12), y, dx;
    ASSERT_TRUE(AvgPool2dForward(x, c.spec, {}, &y).ok());
    Tensor r = RandomTensor(y.shape(), 13);
    ASSERT_TRUE(AvgPool2dBackward(r, x.shape(), c.spec, &dx).ok());
    auto loss = [&] {
      Tensor out;
      EXPECT_TRUE(AvgPool2dForward(x, c.spec, {}, &out).ok());
      return WeightedSum(out, r);
    };
    GradCheckOptions opt;
    opt.max_checks = 0;
    EXPECT_TRUE(CheckGradient("dx", &x, dx, loss, opt));
  }
}

TEST(PoolingLayerTest, GlobalAvgPoolValuesAndGradient) {
  Tensor x = RandomTensor({2, 3, 3, 4}, 14), y, dx;
  ASSERT_TRUE(GlobalAvgPoolForward(x, {}, &y).ok());
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  double ref = 0;
  for (int i = 0; i < 12; ++i) ref += x[12 + i];  // sample 0, channel 1
  EXPECT_NEAR(y[1], ref / 12, 1e-6);
  Tensor r = RandomTensor(y.shape(), 15);
  ASSERT_TRUE(GlobalAvgPoolBackward(r, x.shape(), &dx).ok());
  auto loss = [&] {
    Tensor out;
    EXPECT_TRUE(GlobalAvgPoolForward(x, {}, &out).ok());
    return WeightedSum(out, r);
  };
  EXPECT_TRUE(CheckGradient("dx", &x, dx, loss));
}

TEST(PoolingLayerTest, AveragesFollowTheReduceSpec) {
  // A 2x5 plane whose row-major sum is 7 sequentially and 8 with Kahan.
  Tensor x = FromValues({1, 1, 2, 5}, {1e8f, 1, -1e8f, 1, 1, 1, 1, 1, 1, 1});
  Tensor g;
  ASSERT_TRUE(GlobalAvgPoolForward(x, {}, &g).ok());
  EXPECT_EQ(g[0], 7.0f / 10.0f);
  ASSERT_TRUE(GlobalAvgPoolForward(x, *ParseReduceOrder("kahan"), &g).ok());
  EXPECT_EQ(g[0], 8.0f / 10.0f);
  Pool2dSpec whole;
  whole.kernel_h = 2;
  whole.kernel_w = 5;
  ASSERT_TRUE(AvgPool2dForward(x, whole, {}, &g).ok());
  EXPECT_EQ(g[0], 7.0f / 10.0f);
  ASSERT_TRUE(AvgPool2dForward(x, whole, *ParseReduceOrder("kahan"), &g).ok());
  EXPECT_EQ(g[0], 8.0f / 10.0f);
}

TEST(PoolingLayerTest, BitwiseIdenticalForOneTwoFourThreads) {
  Tensor x = RandomTensor({4, 8, 9, 9}, 16);
  ReduceSpec reduce = *ParseReduceOrder("lanes4");
  Pool2dSpec spec = Pool2dSpec::Square(3, 2, 1, false);
  std::vector<Tensor> outs;
  for (int threads : {1, 2, 4}) {
    ThreadScope scope(threads);
    Tensor a, m, g, da, dm;
    std::vector<int32_t> idx;
    ASSERT_TRUE(AvgPool2dForward(x, spec, reduce, &a).ok());
    ASSERT_TRUE(MaxPool2dForward(x, spec, &m, &idx).ok());
    ASSERT_TRUE(GlobalAvgPoolForward(x, reduce, &g).ok());
    ASSERT_TRUE(AvgPool2dBackward(a, x.shape(), spec, &da).ok());
    ASSERT_TRUE(MaxPool2dBackward(m, idx, x.shape(), spec, &dm).ok());
    for (Tensor* t : {&a, &m, &g, &da, &dm}) outs.push_back(*t);
  }
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(outs[i].BitwiseEqual(outs[5 + i])) << i;
    EXPECT_TRUE(outs[i].BitwiseEqual(outs[10 + i])) << i;
  }
}

TEST(PoolingLayerTest, BadInputIsRejected) {
  Tensor x({1, 1, 4, 4}), y, dx;
  std::vector<int32_t> idx;
  Status s = MaxPool2dForward(x, Pool2dSpec::Square(2, 2, 2), &y, &idx);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("padding"), std::string::npos) << s.message();
  s = AvgPool2dForward(Tensor({4, 4}), Pool2dSpec::Square(2, 2), {}, &y);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[4, 4]"), std::string::npos) << s.message();
  s = AvgPool2dForward(x, Pool2dSpec::Square(5, 1), {}, &y);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  s = AvgPool2dBackward(Tensor({1, 1, 3, 3}), x.shape(),
                        Pool2dSpec::Square(2, 2), &dx);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("dy"), std::string::npos) << s.message();
  s = MaxPool2dBackward(Tensor({1, 1, 2, 2}), {0, 1, 99, 2}, x.shape(),
                        Pool2dSpec::Square(2, 2), &dx);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  s = GlobalAvgPoolBackward(Tensor({1, 2}), x.shape(), &dx);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xw::layer_test
