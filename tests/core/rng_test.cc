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

}  // namespace
}  // namespace xw
