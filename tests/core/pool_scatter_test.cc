// Max pooling's backward under a scatter order (PoolScatterOrder): where
// windows overlap, `random` adds an element's gradients in a Philox
// permutation (GPU atomics' statistics, reproducibly), `index` in output
// row-major order. Known values, a golden hash, a gradient check, and the
// same bits on every thread count and SIMD target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "grad_check.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/parallel.h"
#include "xwires/core/pooling.h"
#include "xwires/core/simd_target.h"

namespace xw::layer_test {
namespace {

// FNV-1a over the float bits.
uint64_t BitsHash(const Tensor& t) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t i = 0; i < t.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, t.data() + i, 4);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

PoolScatterOrder Random(uint64_t step) {
  PoolScatterOrder o;
  o.random = true;
  o.seed = 5;
  o.step = step;
  o.tensor = StreamId("maxpool/features.3");
  return o;
}

// A 1x5 row pooled by 1x3 windows at stride 1: all three windows pick the
// middle element, whose gradient is the sum of dy = (1, 2^24, -2^24).
struct ThreeAddends {
  Tensor x = Tensor({1, 1, 1, 5});
  Tensor dy = Tensor({1, 1, 1, 3});
  std::vector<int32_t> idx;
  Pool2dSpec spec;
  ThreeAddends() {
    x[2] = 5.0f;
    dy[0] = 1.0f;
    dy[1] = 16777216.0f;
    dy[2] = -16777216.0f;
    spec.kernel_h = 1;
    spec.kernel_w = 3;
    spec.stride_h = spec.stride_w = 1;
    Tensor y;
    EXPECT_TRUE(MaxPool2dForward(x, spec, &y, &idx).ok());
  }
};

TEST(PoolScatterTest, IndexOrderIsOutputOrderAndRandomFollowsThePermutation) {
  ThreeAddends c;
  Tensor dx;
  ASSERT_TRUE(MaxPool2dBackward(c.dy, c.idx, c.x.shape(), c.spec, &dx).ok());
  EXPECT_EQ(dx[2], 0.0f);  // (1 + 2^24) ties to 2^24, minus 2^24
  ASSERT_TRUE(MaxPool2dBackward(c.dy, c.idx, c.x.shape(), c.spec, PoolScatterOrder{}, &dx).ok());
  EXPECT_EQ(dx[2], 0.0f);
  int ones = 0, zeros = 0;
  std::vector<int64_t> perm;
  for (uint64_t step = 0; step < 32; ++step) {
    ASSERT_TRUE(MaxPool2dBackward(c.dy, c.idx, c.x.shape(), c.spec, Random(step), &dx).ok());
    // The expected value: the addends in the permutation the key draws for
    // element 2 (flat index into dx).
    const PoolScatterOrder o = Random(step);
    ScatterPermutation(o.seed, o.step, o.tensor, 2, 3, &perm);
    float want = 0.0f;
    for (int64_t k : perm) want = want + c.dy[k];
    EXPECT_EQ(dx[2], want) << "step " << step;
    EXPECT_EQ(dx[0] + dx[1] + dx[3] + dx[4], 0.0f);
    (dx[2] == 1.0f ? ones : zeros) += 1;
    Tensor again;
    ASSERT_TRUE(
        MaxPool2dBackward(c.dy, c.idx, c.x.shape(), c.spec, Random(step), &again).ok());
    EXPECT_TRUE(again.BitwiseEqual(dx)) << "step " << step;
  }
  // (2^24, -2^24, 1) and (-2^24, 1, 2^24) give 1: random differs from index.
  EXPECT_GT(ones, 0);
  EXPECT_GT(zeros, 0);
}

TEST(PoolScatterTest, GoldenHashesSameOnEveryThreadCountAndTarget) {
  // Overlapping 3x3 windows at stride 2 with padding: interior elements
  // collect up to four gradients. dy is large-range so orders matter.
  Tensor x = RandomTensor({2, 3, 9, 9}, 21);
  const Pool2dSpec spec = Pool2dSpec::Square(3, 2, 1);
  Tensor y;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, spec, &y, &idx).ok());
  Tensor dy = RandomTensor(y.shape(), 22);
  for (int64_t i = 0; i < dy.size(); ++i) dy[i] *= std::ldexp(1.0f, static_cast<int>(i % 23));
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE(target + " threads " + std::to_string(threads));
      ThreadScope scope(threads);
      Tensor di, dr;
      ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, PoolScatterOrder{}, &di).ok());
      ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, Random(3), &dr).ok());
      EXPECT_EQ(BitsHash(di), 0x68fa4af251750289ull);
      EXPECT_EQ(BitsHash(dr), 0x9d7258204384151aull);
      EXPECT_FALSE(di.BitwiseEqual(dr));
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

TEST(PoolScatterTest, RandomOrderGradientMatchesFiniteDifferences) {
  // Distinct values 0.05 apart (no argmax flips under a 1e-2 step).
  Tensor x({2, 2, 7, 7});
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) x[i] = 0.05f * static_cast<float>((i * 37) % n) - 1.0f;
  const Pool2dSpec spec = Pool2dSpec::Square(3, 2, 1);
  Tensor y, dx;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, spec, &y, &idx).ok());
  Tensor r = RandomTensor(y.shape(), 23);
  ASSERT_TRUE(MaxPool2dBackward(r, idx, x.shape(), spec, Random(7), &dx).ok());
  auto loss = [&] {
    Tensor out;
    std::vector<int32_t> tmp;
    EXPECT_TRUE(MaxPool2dForward(x, spec, &out, &tmp).ok());
    return WeightedSum(out, r);
  };
  GradCheckOptions opt;
  opt.eps = 1e-2;
  opt.max_checks = 0;
  // fp32 sums of at most four addends in [-1, 1): any order is within a few
  // ulps of the exact gradient, far below the difference quotient's error.
  opt.rtol = 1e-3;
  opt.atol = 1e-4;
  EXPECT_TRUE(CheckGradient("dx", &x, dx, loss, opt));
}

TEST(PoolScatterTest, WithoutOverlapRandomEqualsIndex) {
  Tensor x = RandomTensor({2, 3, 8, 8}, 24), y;
  std::vector<int32_t> idx;
  const Pool2dSpec spec = Pool2dSpec::Square(2, 2);
  ASSERT_TRUE(MaxPool2dForward(x, spec, &y, &idx).ok());
  Tensor dy = RandomTensor(y.shape(), 25), di, dr;
  ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, &di).ok());
  ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, Random(1), &dr).ok());
  EXPECT_TRUE(di.BitwiseEqual(dr));
}

}  // namespace
}  // namespace xw::layer_test
