#include "xwires/core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "xwires/core/parallel.h"

namespace xw {
namespace {

// Known-answer vectors from Random123's kat_vectors (philox4x32, 10 rounds).
TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  auto r = Philox::Raw({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  r = Philox::Raw({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                  {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(r, (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  r = Philox::Raw({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                  {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(r, (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(PhiloxTest, UniformMomentsAndRange) {
  Philox p(42, StreamId("test"));
  const int n = 200000;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    float u = p.Uniform(i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    sq += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
}

TEST(PhiloxTest, NormalMoments) {
  Philox p(7, 1);
  const int n = 200000;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    double z = p.Normal(i);
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
}

TEST(PhiloxTest, StreamsDifferAndFillIsThreadIndependent) {
  Philox a(1, StreamId("a")), b(1, StreamId("b"));
  EXPECT_NE(a.U32(0), b.U32(0));
  std::vector<float> x1(100000), x4(100000);
  {
    ThreadScope s(1);
    a.FillNormal(x1.data(), x1.size(), 0.0f, 1.0f);
  }
  {
    ThreadScope s(4);
    a.FillNormal(x4.data(), x4.size(), 0.0f, 1.0f);
  }
  EXPECT_EQ(x1, x4);
  EXPECT_EQ(x1[123], a.Normal(123));
}

TEST(PhiloxTest, RangesEqualTheOneByOneDraws) {
  // Runs that start and end inside a block reuse it; every value must still
  // be the one Uniform/Normal computes alone.
  const Philox a(7, StreamId("ranges"));
  for (uint64_t first : {0u, 1u, 2u, 3u, 5u, 1000001u}) {
    for (int64_t n : {0, 1, 2, 3, 4, 7, 13}) {
      std::vector<float> u(n + 1, -1.0f), z(n + 1, -1.0f);
      a.UniformRange(first, n, u.data());
      a.NormalRange(first, n, z.data());
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(u[i], a.Uniform(first + i)) << first << " " << i;
        EXPECT_EQ(z[i], a.Normal(first + i)) << first << " " << i;
      }
      EXPECT_EQ(u[n], -1.0f);  // nothing written past n
      EXPECT_EQ(z[n], -1.0f);
    }
  }
  std::vector<float> f(1000);
  a.FillUniform(f.data(), f.size(), -2.0f, 3.0f, 9);
  EXPECT_EQ(f[0], -2.0f + 5.0f * a.Uniform(9));
  EXPECT_EQ(f[999], -2.0f + 5.0f * a.Uniform(1008));
}

}  // namespace
}  // namespace xw
