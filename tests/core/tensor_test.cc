#include "xwires/core/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "xwires/core/status.h"

namespace xw {
namespace {

TEST(TensorTest, ZeroFilledAlignedNchw) {
  Tensor t({2, 3, 4, 5});
  EXPECT_EQ(t.size(), 120);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(t[i], 0.0f);
  t.at(1, 2, 3, 4) = 7.0f;
  EXPECT_EQ(t[((1 * 3 + 2) * 4 + 3) * 5 + 4], 7.0f);
  EXPECT_EQ(ShapeToString(t.shape()), "[2, 3, 4, 5]");
}

TEST(TensorTest, ReshapeKeepsDataAndRejectsWrongSize) {
  Tensor t({2, 6}, 1.5f);
  t.Reshape({3, 4});
  EXPECT_EQ(t.dim(0), 3);
  EXPECT_EQ(t[11], 1.5f);
  EXPECT_THROW(t.Reshape({5}), std::invalid_argument);
}

TEST(TensorTest, CopyIsDeepAndBitwiseEqual) {
  Tensor a({4}, 2.0f);
  Tensor b = a;
  EXPECT_TRUE(a.BitwiseEqual(b));
  b[0] = 3.0f;
  EXPECT_FALSE(a.BitwiseEqual(b));
  EXPECT_EQ(a[0], 2.0f);
}

TEST(TensorTest, LargeBlocksAreHugePageAlignedZeroedAndReused) {
  // 8 MiB and more: 2 MiB aligned, and a freed block of the same size comes
  // back for the next allocation (the pool), zero-filled again by Tensor.
  const int64_t n = int64_t{3} << 20;  // 12 MiB of floats
  const float* first;
  {
    Tensor big({n}, 5.0f);
    first = big.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (uintptr_t{2} << 20), 0u);
    big[n - 1] = 9.0f;
  }
  Tensor again({n});
  EXPECT_EQ(again.data(), first);
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(again[i], 0.0f);
  ASSERT_EQ(again[n - 1], 0.0f);
  // A second live block of the size is a new one; small blocks keep 64.
  Tensor other({n}, 1.0f);
  EXPECT_NE(other.data(), again.data());
  EXPECT_EQ(other[n - 1], 1.0f);
  Tensor small({1000});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = Status::NotFound("file x.bin");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(), "not found: file x.bin");
  EXPECT_EQ(bad.status().WithContext("load").message(), "load: file x.bin");
  EXPECT_EQ(bad.status().WithContext("").message(), "file x.bin");
  EXPECT_TRUE(Status::OK().WithContext("load").ok());
}

}  // namespace
}  // namespace xw
