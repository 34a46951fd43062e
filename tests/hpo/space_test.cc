#include "xwires/hpo/space.h"

#include <gtest/gtest.h>

#include <cmath>

namespace xw::hpo {
namespace {

TEST(SearchSpace, DefaultIsTableOne) {
  const SearchSpace s = DefaultSearchSpace();
  ASSERT_EQ(s.size(), 4);
  EXPECT_EQ(s.dim(0), (Dimension{"lr", DimType::kReal, 1e-8, 0.1, true}));
  EXPECT_EQ(s.dim(1), (Dimension{"epochs", DimType::kInteger, 1, 50, false}));
  EXPECT_EQ(s.dim(2), (Dimension{"adam_eps", DimType::kReal, 1e-8, 1.0, true}));
  EXPECT_EQ(s.dim(3),
            (Dimension{"batch_size", DimType::kInteger, 10, 10000, false}));
  EXPECT_EQ(s.IndexOf("adam_eps"), 2);
  EXPECT_EQ(s.IndexOf("momentum"), -1);
}

TEST(SearchSpace, LogDimensionIsUniformInLog10) {
  const SearchSpace s = DefaultSearchSpace();
  // lr: log10 in [-8, -1]; 1e-4.5 is at (−4.5 + 8) / 7 = 0.5.
  EXPECT_NEAR(s.ToUnit(0, std::pow(10.0, -4.5)), 0.5, 1e-12);
  EXPECT_NEAR(s.ToUnit(0, 1e-8), 0.0, 1e-15);
  EXPECT_NEAR(s.ToUnit(0, 0.1), 1.0, 1e-15);
  EXPECT_NEAR(s.FromUnit(0, 3.0 / 7.0), 1e-5, 1e-18);
  EXPECT_NEAR(s.FromUnit(2, 0.5), 1e-4, 1e-16);  // adam_eps: log10 in [-8, 0]
}

TEST(SearchSpace, IntegersRoundBothWays) {
  const SearchSpace s = DefaultSearchSpace();
  EXPECT_DOUBLE_EQ(s.ToUnit(1, 25.0), 24.0 / 49.0);
  EXPECT_DOUBLE_EQ(s.ToUnit(1, 25.4), 24.0 / 49.0);  // rounded first
  EXPECT_EQ(s.FromUnit(1, 0.5), 26.0);   // 1 + 24.5 -> 25.5 rounds to 26
  EXPECT_EQ(s.FromUnit(1, 0.49), 25.0);  // 1 + 24.01
  EXPECT_EQ(s.FromUnit(1, -3.0), 1.0);   // clamped
  EXPECT_EQ(s.FromUnit(3, 1.0), 10000.0);
  const std::vector<double> snapped =
      s.Snap(std::vector<double>{0.3, 0.49, 0.7, 0.123456});
  EXPECT_DOUBLE_EQ(snapped[0], 0.3);
  EXPECT_DOUBLE_EQ(snapped[1], 24.0 / 49.0);
  EXPECT_DOUBLE_EQ(snapped[3], (std::round(10 + 0.123456 * 9990) - 10) / 9990);
  EXPECT_EQ(s.Snap(snapped), snapped);
}

TEST(SearchSpace, LogIntegerDimension) {
  auto s = SearchSpace::Create({{"batch", DimType::kInteger, 1, 1000, true}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NEAR(s->ToUnit(0, 10), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(s->FromUnit(0, 0.5), 32.0);  // 10^1.5 = 31.62
}

TEST(SearchSpace, RoundTripsEveryPoint) {
  const SearchSpace s = DefaultSearchSpace();
  const std::vector<double> x = {3e-4, 17, 1e-7, 128};
  const std::vector<double> back = s.FromUnit(s.ToUnit(x));
  EXPECT_NEAR(back[0], x[0], 1e-16);
  EXPECT_EQ(back[1], 17);
  EXPECT_NEAR(back[2], x[2], 1e-20);
  EXPECT_EQ(back[3], 128);
}

TEST(SearchSpace, InvalidDimensionsAreNamed) {
  auto bad = [](Dimension d) {
    return SearchSpace::Create({d}).status().message();
  };
  EXPECT_NE(bad({"lr", DimType::kReal, 0.0, 1.0, true})
                .find("'lr': a log dimension needs low > 0"),
            std::string::npos);
  EXPECT_NE(bad({"x", DimType::kReal, 2.0, 1.0, false})
                .find("'x': low (2) must be below high (1)"),
            std::string::npos);
  EXPECT_NE(
      bad({"n", DimType::kInteger, 1.5, 4, false}).find("'n': integer bounds"),
      std::string::npos);
  EXPECT_NE(bad({"", DimType::kReal, 0, 1, false}).find("name is empty"),
            std::string::npos);
  auto dup = SearchSpace::Create(
      {{"a", DimType::kReal, 0, 1, false}, {"a", DimType::kReal, 0, 1, false}});
  EXPECT_NE(dup.status().message().find("'a' is used twice"),
            std::string::npos);
  EXPECT_FALSE(SearchSpace::Create({}).ok());
  // A degenerate integer dimension is allowed (HyperSpace splits can produce
  // it).
  auto fixed = SearchSpace::Create({{"k", DimType::kInteger, 3, 3, false}});
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->ToUnit(0, 3), 0.0);
  EXPECT_EQ(fixed->FromUnit(0, 0.7), 3.0);
}

TEST(SearchSpace, CheckPointNamesTheDimension) {
  const SearchSpace s = DefaultSearchSpace();
  EXPECT_TRUE(s.CheckPoint(std::vector<double>{1e-3, 5, 1e-8, 10}).ok());
  const Status out = s.CheckPoint(std::vector<double>{1.0, 5, 1e-8, 10});
  EXPECT_EQ(out.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(out.message().find("'lr' value 1 is outside [1e-08, 0.1]"),
            std::string::npos)
      << out.message();
  EXPECT_NE(s.CheckPoint(std::vector<double>{1e-3, 5.5, 1e-8, 10})
                .message()
                .find("'epochs'"),
            std::string::npos);
  EXPECT_NE(s.CheckPoint(std::vector<double>{1e-3, 5})
                .message()
                .find("2 coordinates"),
            std::string::npos);
  EXPECT_FALSE(s.CheckPoint(std::vector<double>{NAN, 5, 1e-8, 10}).ok());
}

}  // namespace
}  // namespace xw::hpo
