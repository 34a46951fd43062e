#include "xwires/hpo/sobol.h"

#include <gtest/gtest.h>

#include <set>

namespace xw::hpo {
namespace {

// scipy.stats.qmc.Sobol(6, scramble=False).random(8) (SciPy 1.10, which ships
// the same Joe-Kuo 6.21201 direction numbers).
TEST(Sobol, FirstPointsMatchScipy) {
  const double expect[8][6] = {
      {0, 0, 0, 0, 0, 0},
      {0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
      {0.75, 0.25, 0.25, 0.25, 0.75, 0.75},
      {0.25, 0.75, 0.75, 0.75, 0.25, 0.25},
      {0.375, 0.375, 0.625, 0.875, 0.375, 0.125},
      {0.875, 0.875, 0.125, 0.375, 0.875, 0.625},
      {0.625, 0.125, 0.875, 0.625, 0.625, 0.875},
      {0.125, 0.625, 0.375, 0.125, 0.125, 0.375},
  };
  const Sobol s = Sobol::Create(6).value();
  for (int i = 0; i < 8; ++i) {
    double x[6];
    s.Point(i, x);
    for (int j = 0; j < 6; ++j) EXPECT_EQ(x[j], expect[i][j]) << i << "," << j;
  }
}

// Later points in high dimensions (scipy, d = 21, columns 0, 5, 12, 20).
TEST(Sobol, LaterPointsInHighDimensionsMatchScipy) {
  const Sobol s = Sobol::Create(21).value();
  const struct {
    int index;
    double v[4];
  } cases[] = {
      {100, {0.4140625, 0.7421875, 0.4765625, 0.7578125}},
      {1000, {0.2197265625, 0.9072265625, 0.1611328125, 0.5224609375}},
      {1023, {0.0009765625, 0.4384765625, 0.1298828125, 0.8662109375}},
  };
  for (const auto& c : cases) {
    double x[21];
    s.Point(c.index, x);
    EXPECT_EQ(x[0], c.v[0]);
    EXPECT_EQ(x[5], c.v[1]);
    EXPECT_EQ(x[12], c.v[2]);
    EXPECT_EQ(x[20], c.v[3]);
  }
}

TEST(Sobol, GenerateEqualsPointAndShiftIsAnXor) {
  const Sobol s = Sobol::Create(5).value();
  std::vector<double> block(300 * 5);
  const uint32_t shift[5] = {0x80000000u, 0x12345678u, 0u, 0xffffffffu,
                             0x0f0f0f0fu};
  s.Generate(37, 300, block.data(), shift);
  for (int i = 0; i < 300; ++i) {
    double x[5], plain[5];
    s.Point(37 + i, x, shift);
    s.Point(37 + i, plain);
    for (int j = 0; j < 5; ++j) {
      ASSERT_EQ(block[i * 5 + j], x[j]);
      const uint32_t bits = static_cast<uint32_t>(plain[j] * 0x1.0p32);
      EXPECT_EQ(x[j], static_cast<double>(bits ^ shift[j]) * 0x1.0p-32);
    }
  }
}

// The first 2^m points of every coordinate hit each of the 2^m equal bins
// exactly once (the (0, m, 1)-net property), shifted or not.
TEST(Sobol, EachCoordinateIsStratified) {
  const Sobol s = Sobol::Create(21).value();
  std::vector<uint32_t> shift(21, 0x9e3779b9u);
  std::vector<double> pts(1024 * 21);
  s.Generate(0, 1024, pts.data(), shift.data());
  for (int j = 0; j < 21; ++j) {
    std::set<int> bins;
    for (int i = 0; i < 1024; ++i)
      bins.insert(static_cast<int>(pts[i * 21 + j] * 1024));
    EXPECT_EQ(bins.size(), 1024u) << "dimension " << j;
  }
}

TEST(Sobol, DimensionIsChecked) {
  EXPECT_FALSE(Sobol::Create(0).ok());
  EXPECT_NE(Sobol::Create(22).status().message().find("[1, 21]"),
            std::string::npos);
}

}  // namespace
}  // namespace xw::hpo
