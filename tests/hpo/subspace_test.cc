#include "xwires/hpo/subspace.h"

#include <gtest/gtest.h>

#include <cmath>

namespace xw::hpo {
namespace {

// The HyperSpace formula, written out independently of the implementation.
std::pair<double, double> Half(double low, double high, int half, double phi) {
  const double r = high - low;
  return half == 0 ? std::make_pair(low, low + r / 2 + phi * r / 2)
                   : std::make_pair(high - r / 2 - phi * r / 2, high);
}

TEST(Subspace, RealDimensionFollowsTheFormula) {
  const Dimension d{"x", DimType::kReal, -5, 10, false};
  for (double phi : {0.0, 0.25, 0.5, 1.0}) {
    for (int h : {0, 1}) {
      auto s = SplitDimension(d, h, phi);
      ASSERT_TRUE(s.ok());
      const auto [lo, hi] = Half(-5, 10, h, phi);
      EXPECT_DOUBLE_EQ(s->low, lo);
      EXPECT_DOUBLE_EQ(s->high, hi);
    }
  }
  // phi = 0.5: [-5, 6.25] and [-1.25, 10].
  EXPECT_DOUBLE_EQ(SplitDimension(d, 0, 0.5)->high, 6.25);
  EXPECT_DOUBLE_EQ(SplitDimension(d, 1, 0.5)->low, -1.25);
}

TEST(Subspace, IntegersFloorTheLowHalfAndCeilTheHighHalf) {
  const Dimension epochs{"epochs", DimType::kInteger, 1, 50, false};
  // r = 49, r/2 + phi r/2 = 36.75 at phi = 0.5.
  EXPECT_EQ(SplitDimension(epochs, 0, 0.5)->high, 37.0);  // floor(37.75)
  EXPECT_EQ(SplitDimension(epochs, 1, 0.5)->low, 14.0);   // ceil(13.25)
  const Dimension batch{"batch_size", DimType::kInteger, 10, 10000, false};
  EXPECT_EQ(SplitDimension(batch, 0, 0.5)->high, 7502.0);  // floor(10 + 7492.5)
  EXPECT_EQ(SplitDimension(batch, 1, 0.5)->low,
            2508.0);  // ceil(10000 - 7492.5)
}

TEST(Subspace, LogDimensionsSplitInLog10ByDefault) {
  const Dimension lr{"lr", DimType::kReal, 1e-8, 0.1, true};
  // log10 range [-8, -1], r = 7, width 5.25 at phi = 0.5.
  EXPECT_NEAR(SplitDimension(lr, 0, 0.5)->high, std::pow(10.0, -2.75), 1e-17);
  EXPECT_NEAR(SplitDimension(lr, 1, 0.5)->low, std::pow(10.0, -6.25), 1e-21);
  EXPECT_TRUE(SplitDimension(lr, 1, 0.5)->log);
  // HyperSpace's own behaviour: the same formula on the raw bounds.
  const auto [lo, hi] = Half(1e-8, 0.1, 0, 0.5);
  EXPECT_DOUBLE_EQ(SplitDimension(lr, 0, 0.5, LogSplit::kLinear)->high, hi);
  EXPECT_DOUBLE_EQ(SplitDimension(lr, 1, 0.5, LogSplit::kLinear)->low,
                   Half(1e-8, 0.1, 1, 0.5).first);
  EXPECT_EQ(lo, 1e-8);
}

TEST(Subspace, BitIPicksDimensionIsHalf) {
  const SearchSpace space = DefaultSearchSpace();
  EXPECT_EQ(NumSubspaces(space), 16);
  auto all = HyperSpacePartition(space, 0.5);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 16u);
  for (int s = 0; s < 16; ++s) {
    for (int i = 0; i < 4; ++i) {
      const Dimension expect =
          SplitDimension(space.dim(i), (s >> i) & 1, 0.5).value();
      EXPECT_EQ((*all)[s].dim(i), expect) << "subspace " << s << " dim " << i;
    }
  }
  // Subspace 5 = 0b0101: high half of lr (bit 0) and adam_eps (bit 2), low
  // half of epochs (bit 1) and batch_size (bit 3).
  const SearchSpace& s5 = (*all)[5];
  EXPECT_NEAR(s5.dim(0).low, std::pow(10.0, -6.25), 1e-21);
  EXPECT_EQ(s5.dim(0).high, 0.1);
  EXPECT_EQ(s5.dim(1).low, 1);
  EXPECT_EQ(s5.dim(1).high, 37);
  EXPECT_NEAR(s5.dim(2).low, 1e-6, 1e-21);  // log10 range [-8, 0]: 0 - 6
  EXPECT_EQ(s5.dim(2).high, 1.0);
  EXPECT_EQ(s5.dim(3).low, 10);
  EXPECT_EQ(s5.dim(3).high, 7502);
}

TEST(Subspace, HalvesCoverTheWholeRangeAndOverlap) {
  const SearchSpace space = DefaultSearchSpace();
  for (int i = 0; i < space.size(); ++i) {
    const Dimension lo = SplitDimension(space.dim(i), 0, 0.5).value();
    const Dimension hi = SplitDimension(space.dim(i), 1, 0.5).value();
    EXPECT_EQ(lo.low, space.dim(i).low);
    EXPECT_EQ(hi.high, space.dim(i).high);
    EXPECT_LT(hi.low, lo.high) << space.dim(i).name;
  }
}

TEST(Subspace, BadArgumentsAreRejected) {
  const SearchSpace space = DefaultSearchSpace();
  EXPECT_NE(
      Subspace(space, 16, 0.5).status().message().find("subspace index 16"),
      std::string::npos);
  EXPECT_NE(Subspace(space, 0, 1.5).status().message().find("overlap phi"),
            std::string::npos);
  EXPECT_FALSE(SplitDimension(space.dim(0), 2, 0.5).ok());
}

TEST(Subspace, TinyIntegerRangeCanDegenerate) {
  const Dimension d{"k", DimType::kInteger, 1, 2, false};
  auto lo = SplitDimension(d, 0, 0.0);  // [1, floor(1.5)] = [1, 1]
  ASSERT_TRUE(lo.ok());
  EXPECT_EQ(lo->low, 1);
  EXPECT_EQ(lo->high, 1);
  EXPECT_TRUE(SearchSpace::Create({*lo}).ok());
}

}  // namespace
}  // namespace xw::hpo
