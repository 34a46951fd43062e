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

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = Status::NotFound("file x.bin");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(), "not found: file x.bin");
  EXPECT_EQ(bad.status().WithContext("load").message(), "load: file x.bin");
}

}  // namespace
}  // namespace xw
