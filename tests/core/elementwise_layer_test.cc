// ReLU, dropout, residual add, channel concat/split, flatten and axpy.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "grad_check.h"
#include "xwires/core/activation.h"
#include "xwires/core/dropout.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor_ops.h"

namespace xw::layer_test {
namespace {

TEST(ReluLayerTest, KnownValuesAndGradientAtZero) {
  Tensor x({5});
  const float v[] = {-2.0f, 0.0f, 3.0f, NAN, -0.5f};
  for (int i = 0; i < 5; ++i) x[i] = v[i];
  Tensor y, dx, dy({5}, 1.0f);
  ASSERT_TRUE(ReluForward(x, &y).ok());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 3.0f);
  EXPECT_TRUE(std::isnan(y[3]));
  ASSERT_TRUE(ReluBackward(x, dy, &dx).ok());
  EXPECT_EQ(dx[1], 0.0f);  // gradient at exactly 0 is 0
  EXPECT_EQ(dx[2], 1.0f);
  EXPECT_EQ(dx[4], 0.0f);
  Tensor inplace = x;
  ASSERT_TRUE(ReluForward(inplace, &inplace).ok());
  EXPECT_EQ(inplace[2], 3.0f);
  EXPECT_EQ(ReluBackward(x, Tensor({4}), &dx).code(),
            Status::Code::kInvalidArgument);
}

TEST(ReluLayerTest, Gradient) {
  Tensor x = RandomTensor({2, 3, 4, 4}, 21);
  for (int64_t i = 0; i < x.size(); ++i) {
    if (std::fabs(x[i]) < 0.05f) x[i] = 0.5f;  // keep clear of the kink
  }
  Tensor y, dx;
  ASSERT_TRUE(ReluForward(x, &y).ok());
  Tensor r = RandomTensor(y.shape(), 22);
  ASSERT_TRUE(ReluBackward(y, r, &dx).ok());  // from the output
  auto loss = [&] {
    Tensor out;
    EXPECT_TRUE(ReluForward(x, &out).ok());
    return WeightedSum(out, r);
  };
  EXPECT_TRUE(CheckGradient("dx", &x, dx, loss));
}

TEST(DropoutLayerTest, MaskFollowsPhiloxAndScales) {
  Tensor x = RandomTensor({10000}, 23, 1.0f, 2.0f);
  Philox rng(42, StreamId("dropout/fc1"));
  const float p = 0.3f;
  Tensor y, mask;
  ASSERT_TRUE(DropoutForward(x, p, rng, 1000, true, &y, &mask).ok());
  const float scale = 1.0f / (1.0f - p);
  int64_t kept = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    const bool keep = rng.Uniform(1000 + i) >= p;
    kept += keep;
    ASSERT_EQ(mask[i], keep ? scale : 0.0f) << i;
    ASSERT_EQ(y[i], keep ? x[i] * scale : 0.0f) << i;
  }
  EXPECT_NEAR(static_cast<double>(kept) / x.size(), 0.7, 0.02);
  Tensor other;
  ASSERT_TRUE(DropoutForward(x, p, rng, 0, true, &other, nullptr).ok());
  EXPECT_FALSE(other.BitwiseEqual(y));  // a different offset, a different mask
  for (int threads : {1, 2, 4}) {
    ThreadScope scope(threads);
    Tensor t;
    ASSERT_TRUE(DropoutForward(x, p, rng, 1000, true, &t, nullptr).ok());
    EXPECT_TRUE(t.BitwiseEqual(y)) << threads;
  }
}

TEST(DropoutLayerTest, IdentityInEvalAndAtZeroAndAllDroppedAtOne) {
  Tensor x = RandomTensor({3, 4}, 24), y, mask;
  Philox rng(1, 2);
  ASSERT_TRUE(DropoutForward(x, 0.5f, rng, 0, false, &y, &mask).ok());
  EXPECT_TRUE(y.BitwiseEqual(x));
  EXPECT_TRUE(mask.BitwiseEqual(Tensor({3, 4}, 1.0f)));
  ASSERT_TRUE(DropoutForward(x, 0.0f, rng, 0, true, &y, &mask).ok());
  EXPECT_TRUE(y.BitwiseEqual(x));
  ASSERT_TRUE(DropoutForward(x, 1.0f, rng, 0, true, &y, &mask).ok());
  EXPECT_TRUE(y.BitwiseEqual(Tensor({3, 4}, 0.0f)));
  for (float bad : {-0.1f, 1.5f, NAN}) {
    Status s = DropoutForward(x, bad, rng, 0, true, &y, &mask);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
  }
}

TEST(DropoutLayerTest, GradientWithFixedMask) {
  Tensor x = RandomTensor({4, 5}, 25), y, mask, dx;
  Philox rng(7, StreamId("dropout/test"));
  ASSERT_TRUE(DropoutForward(x, 0.4f, rng, 3, true, &y, &mask).ok());
  Tensor r = RandomTensor(y.shape(), 26);
  ASSERT_TRUE(DropoutBackward(r, mask, &dx).ok());
  auto loss = [&] {  // same (seed, stream, offset): same mask
    Tensor out;
    EXPECT_TRUE(DropoutForward(x, 0.4f, rng, 3, true, &out, nullptr).ok());
    return WeightedSum(out, r);
  };
  EXPECT_TRUE(CheckGradient("dx", &x, dx, loss));
  EXPECT_EQ(DropoutBackward(r, Tensor({5, 4}), &dx).code(),
            Status::Code::kInvalidArgument);
}

TEST(TensorOpsTest, AddGradients) {
  Tensor a = RandomTensor({2, 3, 2, 2}, 27), b = RandomTensor({2, 3, 2, 2}, 28),
         y, da, db;
  ASSERT_TRUE(AddForward(a, b, &y).ok());
  EXPECT_EQ(y[5], a[5] + b[5]);
  Tensor r = RandomTensor(y.shape(), 29);
  ASSERT_TRUE(AddBackward(r, &da, &db).ok());
  auto loss = [&] {
    Tensor out;
    EXPECT_TRUE(AddForward(a, b, &out).ok());
    return WeightedSum(out, r);
  };
  EXPECT_TRUE(CheckGradient("da", &a, da, loss));
  EXPECT_TRUE(CheckGradient("db", &b, db, loss));
  Status s = AddForward(a, Tensor({2, 3, 2, 1}), &y);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[2, 3, 2, 1]"), std::string::npos) << s.message();
}

// The fused residual add + ReLU is the two ops, bit for bit, in place too.
TEST(TensorOpsTest, AddReluIsAddThenRelu) {
  Tensor a = RandomTensor({3, 5, 7, 9}, 41), b = RandomTensor({3, 5, 7, 9}, 42);
  a[0] = std::numeric_limits<float>::quiet_NaN();
  a[1] = -0.0f, b[1] = 0.0f;   // +0 after the add
  a[2] = -0.0f, b[2] = -0.0f;  // -0 stays -0 (not below 0)
  a[3] = 1.0f, b[3] = -1.0f;
  Tensor want, got, in_place = a;
  ASSERT_TRUE(AddForward(a, b, &want).ok());
  ASSERT_TRUE(ReluForward(want, &want).ok());
  ASSERT_TRUE(AddReluForward(a, b, &got).ok());
  ASSERT_TRUE(AddReluForward(in_place, b, &in_place).ok());
  EXPECT_TRUE(got.BitwiseEqual(want));
  EXPECT_TRUE(in_place.BitwiseEqual(want));
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_TRUE(std::signbit(got[2]));
  Tensor bad({3, 5, 7, 8});
  const Status s = AddReluForward(a, bad, &got);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("AddReluForward"), std::string::npos) << s.message();
}

TEST(TensorOpsTest, ChannelConcatValuesAndGradient) {
  Tensor a = RandomTensor({2, 2, 2, 3}, 30), b = RandomTensor({2, 3, 2, 3}, 31),
         y;
  ASSERT_TRUE(ChannelConcat({&a, &b}, &y).ok());
  ASSERT_EQ(y.shape(), (Shape{2, 5, 2, 3}));
  EXPECT_EQ(y.at(1, 1, 1, 2), a.at(1, 1, 1, 2));
  EXPECT_EQ(y.at(1, 4, 0, 1), b.at(1, 2, 0, 1));
  Tensor r = RandomTensor(y.shape(), 32), da, db;
  ASSERT_TRUE(ChannelSplit(r, {2, 3}, {&da, &db}).ok());
  auto loss = [&] {
    Tensor out;
    EXPECT_TRUE(ChannelConcat({&a, &b}, &out).ok());
    return WeightedSum(out, r);
  };
  EXPECT_TRUE(CheckGradient("da", &a, da, loss));
  EXPECT_TRUE(CheckGradient("db", &b, db, loss));
  Tensor only_b;
  ASSERT_TRUE(ChannelSplit(r, {2, 3}, {nullptr, &only_b}).ok());
  EXPECT_TRUE(only_b.BitwiseEqual(db));
  Tensor wrong_hw({2, 2, 3, 3});
  EXPECT_EQ(ChannelConcat({&a, &wrong_hw}, &y).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(ChannelSplit(r, {1, 2}, {&da, &db}).code(),
            Status::Code::kInvalidArgument);
}

TEST(TensorOpsTest, FlattenIsAReshapeInNchwOrder) {
  Tensor x = RandomTensor({2, 3, 4, 5}, 33);
  const Tensor before = x;
  const float* data = x.data();
  ASSERT_TRUE(Flatten(&x).ok());
  EXPECT_EQ(x.shape(), (Shape{2, 60}));
  EXPECT_EQ(x.data(), data);  // no copy
  EXPECT_EQ(x[60 + (2 * 4 + 1) * 5 + 3], before.at(1, 2, 1, 3));
}

TEST(TensorOpsTest, AxpyWithAndWithoutFma) {
  // a * x = 1 + 2^-12 + 2^-26 exactly; float rounding drops the 2^-26.
  const float a = 1.0f + std::ldexp(1.0f, -13);
  const float y0 = -(1.0f + std::ldexp(1.0f, -12));
  Tensor x({3}, a), y({3}, y0), yf({3}, y0);
  ASSERT_TRUE(Axpy(a, x, &y, /*fma=*/false).ok());
  ASSERT_TRUE(Axpy(a, x, &yf, /*fma=*/true).ok());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(yf[0], std::ldexp(1.0f, -26));
  Scale(&yf, 2.0f);
  EXPECT_EQ(yf[2], std::ldexp(1.0f, -25));
  EXPECT_EQ(Axpy(1.0f, Tensor({2}), &y).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xw::layer_test
