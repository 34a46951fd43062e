#include "xwires/core/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"

namespace xw {
namespace {

std::vector<ReduceSpec> AllSpecs() {
  std::vector<ReduceSpec> specs;
  for (const char* n : {"sequential", "pairwise", "kahan", "lanes1", "lanes4", "lanes8", "lanes16"}) {
    for (bool fma : {false, true}) specs.push_back(*ParseReduceOrder(n, fma));
  }
  return specs;
}

TEST(ReduceTest, KnownOrdersOnCancellingInput) {
  // 1e8 swamps the unit terms differently in each order.
  std::vector<float> x = {1e8f, 1.0f, -1e8f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  ReduceSpec seq;
  EXPECT_EQ(Sum(x.data(), x.size(), seq), 7.0f);  // the first 1 is lost in 1e8
  EXPECT_EQ(Sum(x.data(), x.size(), *ParseReduceOrder("kahan")), 8.0f);
  // pairwise: [0,5) -> (1e8+1-1e8+1+1) = 2 ; [5,10) -> 5 ; total 7
  EXPECT_EQ(Sum(x.data(), x.size(), *ParseReduceOrder("pairwise")), 7.0f);
  // lanes4: lane0 = 1e8+1+1 = 1e8, lane1 = 1+1+1 = 3, lane2 = -1e8+1 = -1e8,
  // lane3 = 1+1 = 2; fold w=2: (1e8-1e8)=0, 3+2=5; w=1: 5.
  EXPECT_EQ(Sum(x.data(), x.size(), *ParseReduceOrder("lanes4")), 5.0f);
}

TEST(ReduceTest, ExactSumsAgreeInEveryOrder) {
  // Small integers sum exactly in float32 whatever the order.
  std::vector<float> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<float>(i % 17) - 8;
    b[i] = static_cast<float>(i % 5) - 2;
  }
  double ref_sum = 0, ref_dot = 0;
  for (int i = 0; i < 1000; ++i) {
    ref_sum += a[i];
    ref_dot += a[i] * b[i];
  }
  for (const auto& s : AllSpecs()) {
    EXPECT_EQ(Sum(a.data(), a.size(), s), ref_sum) << ReduceOrderName(s);
    EXPECT_EQ(Dot(a.data(), b.data(), a.size(), s), ref_dot) << ReduceOrderName(s);
  }
}

TEST(ReduceTest, StridedMatchesGathered) {
  std::vector<float> x(300);
  Philox(3, 3).FillUniform(x.data(), x.size(), -1, 1);
  std::vector<float> g;
  for (int i = 0; i < 300; i += 3) g.push_back(x[i]);
  for (const auto& s : AllSpecs()) {
    float a = Sum(x.data(), 100, s, 3), b = Sum(g.data(), 100, s);
    EXPECT_EQ(std::memcmp(&a, &b, 4), 0) << ReduceOrderName(s);
  }
}

TEST(ReduceTest, OrdersDifferOnRandomData) {
  std::vector<float> x(4097);
  Philox(9, 9).FillNormal(x.data(), x.size(), 0, 1);
  float seq = Sum(x.data(), x.size(), ReduceSpec{});
  float pw = Sum(x.data(), x.size(), *ParseReduceOrder("pairwise"));
  float l8 = Sum(x.data(), x.size(), *ParseReduceOrder("lanes8"));
  EXPECT_NEAR(seq, pw, 1e-3);
  EXPECT_NEAR(seq, l8, 1e-3);
  EXPECT_TRUE(seq != pw || seq != l8);  // the knob really changes the bits
}

TEST(ReduceTest, ParallelRowSumsBitwiseIdenticalFor1_2_4Threads) {
  const int rows = 257, cols = 1031;
  std::vector<float> x(rows * cols);
  Philox(5, 5).FillNormal(x.data(), x.size(), 0, 1);
  for (const auto& s : AllSpecs()) {
    std::vector<std::vector<float>> out;
    for (int t : {1, 2, 4}) {
      ThreadScope scope(t);
      std::vector<float> r(rows);
      ParallelFor(rows, 7, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) r[i] = Sum(&x[i * cols], cols, s);
      });
      double total = ParallelSum(rows, 13, [&](int64_t b, int64_t e) {
        double acc = 0;
        for (int64_t i = b; i < e; ++i) acc += r[i];
        return acc;
      });
      r.push_back(static_cast<float>(total));
      out.push_back(r);
    }
    EXPECT_EQ(std::memcmp(out[0].data(), out[1].data(), out[0].size() * 4), 0) << ReduceOrderName(s);
    EXPECT_EQ(std::memcmp(out[0].data(), out[2].data(), out[0].size() * 4), 0) << ReduceOrderName(s);
  }
}

TEST(ReduceTest, ParseRejectsUnknown) {
  auto r = ParseReduceOrder("lanes3");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lanes3"), std::string::npos);
}


// The definition of the pairwise order, written out naively: the vectorized
// 256-term blocks in reduce.cc must give the same bits.
float NaivePairwise(const float* a, const float* b, int64_t n, bool fma) {
  if (n <= 8) {
    float acc = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      acc = b == nullptr ? acc + a[i] : fma ? std::fma(a[i], b[i], acc) : acc + a[i] * b[i];
    }
    return acc;
  }
  const int64_t h = n / 2;
  return NaivePairwise(a, b, h, fma) +
         NaivePairwise(a + h, b == nullptr ? nullptr : b + h, n - h, fma);
}

TEST(Reduce, PairwiseBlocksMatchTheNaiveTreeBitwise) {
  const std::vector<int64_t> sizes = {256, 257, 512, 700, 1024, 4096 + 256, 131072};
  std::vector<float> a(131072), b(131072);
  Philox(7, StreamId("test/pairwise")).FillUniform(a.data(), a.size(), -1e3f, 1e3f);
  Philox(8, StreamId("test/pairwise")).FillUniform(b.data(), b.size(), -1.0f, 1.0f);
  a[3] = -0.0f;  // signed zeros and wide magnitudes exercise the rounding
  a[300] = 3e7f;
  for (int64_t n : sizes) {
    for (bool fma : {false, true}) {
      const ReduceSpec spec = *ParseReduceOrder("pairwise", fma);
      const float want_sum = NaivePairwise(a.data(), nullptr, n, false);
      const float want_dot = NaivePairwise(a.data(), b.data(), n, fma);
      const float got_sum = Sum(a.data(), n, spec), got_dot = Dot(a.data(), b.data(), n, spec);
      EXPECT_EQ(std::memcmp(&want_sum, &got_sum, 4), 0) << "sum n=" << n;
      EXPECT_EQ(std::memcmp(&want_dot, &got_dot, 4), 0) << "dot n=" << n << " fma=" << fma;
    }
  }
}

}  // namespace
}  // namespace xw

namespace xw {
namespace {

// Channel c of an [N, C, S] tensor read in place equals the channel gathered
// into one buffer, bit for bit, in every order: segments longer and shorter
// than a 256-term block, sizes that are not powers of two, non-zero shifts.
TEST(ReduceTest, SegmentedMatchesGatheredChannel) {
  struct Case {
    int64_t n, c, s;
  };
  for (const Case& k : {Case{128, 3, 64}, Case{6, 2, 1024}, Case{9, 4, 37}, Case{300, 2, 1}}) {
    std::vector<float> x(k.n * k.c * k.s), g(x.size());
    Philox(7, 0).FillUniform(x.data(), x.size(), -1.0f, 3.0f);
    Philox(8, 0).FillUniform(g.data(), g.size(), -0.5f, 0.5f);
    const int64_t ch = k.c - 1, count = k.n * k.s;
    std::vector<float> xc(count), xm(count), gc(count);
    for (int64_t i = 0; i < count; ++i) {
      xc[i] = x[(i / k.s) * k.c * k.s + ch * k.s + i % k.s];
      gc[i] = g[(i / k.s) * k.c * k.s + ch * k.s + i % k.s];
    }
    const float mean = 0.37f;
    for (int64_t i = 0; i < count; ++i) xm[i] = xc[i] - mean;
    const Segmented xs{x.data() + ch * k.s, k.s, k.c * k.s, 0.0f};
    const Segmented xd{x.data() + ch * k.s, k.s, k.c * k.s, mean};
    const Segmented gs{g.data() + ch * k.s, k.s, k.c * k.s, 0.0f};
    for (const ReduceSpec& spec : AllSpecs()) {
      const std::string id = ReduceOrderName(spec) + (spec.fma ? "+fma" : "") + " s=" +
                             std::to_string(k.s);
      auto bits = [](float v) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        return u;
      };
      EXPECT_EQ(bits(SegmentedSum(xs, count, spec)), bits(Sum(xc.data(), count, spec))) << id;
      EXPECT_EQ(bits(SegmentedDot(xd, xd, count, spec)),
                bits(Dot(xm.data(), xm.data(), count, spec)))
          << id;
      float sum = 0.0f, dot = 0.0f;
      SegmentedSumAndDot(xd, gs, count, spec, &sum, &dot);
      EXPECT_EQ(bits(sum), bits(Sum(gc.data(), count, spec))) << id;
      EXPECT_EQ(bits(dot), bits(Dot(xm.data(), gc.data(), count, spec))) << id;
    }
  }
}

}  // namespace
}  // namespace xw
