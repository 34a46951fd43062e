// The significance statistics against scipy and statsmodels on fixed vectors:
// the test writes its cases as JSON, runs Debian's /usr/bin/python3 on
// tests/core/significance_reference.py (python3-scipy, python3-statsmodels)
// and compares field by field.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "xwires/core/rng.h"
#include "xwires/core/significance.h"

namespace xw::stats {
namespace {

using Vec = std::vector<double>;
using Json = nlohmann::json;

struct Pair {
  Vec a, b;
};

// Fixed accuracy vectors: equal and unequal sizes, ties across and within
// sides, a clear separation, an A/A-like overlap and a collapsed side.
std::vector<Pair> TwoSampleCases() {
  return {
      {{0.456, 0.471, 0.430, 0.490, 0.462}, {0.219, 0.255, 0.180, 0.240, 0.201}},
      {{0.50, 0.52, 0.49, 0.51}, {0.50, 0.48, 0.53, 0.47}},
      {{0.30, 0.31, 0.30, 0.33, 0.29, 0.30}, {0.30, 0.28, 0.31, 0.29, 0.30, 0.27}},
      {{0.41, 0.43, 0.40, 0.45}, {0.38, 0.36, 0.42, 0.37, 0.35, 0.39}},
      {{0.10, 0.10, 0.62, 0.60, 0.61}, {0.55, 0.57, 0.58, 0.56, 0.59, 0.54, 0.60}},
      {{0.9012, 0.8991, 0.9034, 0.9003, 0.8978, 0.9021, 0.9010, 0.8999},
       {0.8960, 0.8985, 0.8971, 0.8990, 0.8957, 0.8979, 0.8968, 0.8981}},
  };
}

// K x n argmax predictions of a 3-class problem: each replica copies a
// profile-wide base and flips a Philox-chosen share of examples.
std::vector<uint8_t> Predictions(int k, int n, uint64_t seed, uint32_t flip_permille,
                                 const std::vector<uint8_t>& base) {
  std::vector<uint8_t> out(static_cast<size_t>(k) * n);
  const Philox rng(seed, StreamId("test/predictions"));
  for (int r = 0; r < k; ++r) {
    for (int e = 0; e < n; ++e) {
      const uint32_t u = rng.U32(static_cast<uint64_t>(r) * n + e);
      out[r * n + e] = (u % 1000 < flip_permille) ? (base[e] + 1 + u % 2) % 3 : base[e];
    }
  }
  return out;
}

std::vector<uint8_t> Base(int n, uint64_t seed) {
  std::vector<uint8_t> b(n);
  const Philox rng(seed, StreamId("test/base"));
  for (int e = 0; e < n; ++e) b[e] = rng.U32(e) % 3;
  return b;
}

std::vector<int> ToInts(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::vector<std::vector<int>> Rows(const std::vector<uint8_t>& p, int k, int n) {
  std::vector<std::vector<int>> rows;
  for (int r = 0; r < k; ++r) rows.emplace_back(p.begin() + r * n, p.begin() + (r + 1) * n);
  return rows;
}

Json RunReference(const Json& cases) {
  const std::string dir = ::testing::TempDir();
  const std::string in = dir + "/significance_cases.json";
  const std::string out = dir + "/significance_expected.json";
  std::ofstream(in) << cases.dump();
  const std::string cmd = std::string("/usr/bin/python3 ") + XWIRES_SOURCE_DIR +
                          "/tests/core/significance_reference.py " + in + " " + out;
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << "reference script failed (needs python3-scipy and "
                      "python3-statsmodels: bash scripts/setup.sh): " << cmd;
  std::ifstream f(out);
  return rc == 0 ? Json::parse(f) : Json();
}

constexpr double kTol = 1e-10;

TEST(SignificanceScipyTest, MatchesScipyAndStatsmodels) {
  Json cases;
  const auto pairs = TwoSampleCases();
  for (const Pair& p : pairs) cases["two_sample"].push_back({{"a", p.a}, {"b", p.b}});
  const std::vector<std::array<int, 4>> tables = {
      {0, 5, 3, 2}, {2, 3, 2, 3}, {5, 0, 0, 5}, {1, 7, 5, 3}, {0, 8, 2, 6}, {4, 1, 1, 4}};
  cases["fisher"] = tables;
  const std::vector<std::array<double, 2>> quantiles = {
      {4.0, 0.975}, {7.3, 0.975}, {3.02, 0.975}, {12.0, 0.9}};
  cases["t_quantile"] = quantiles;
  const std::vector<Vec> bh = {
      {0.01, 0.04, 0.03, 0.20, 0.50, 0.008, 0.07, 0.90},
      {0.3, 0.3, 0.001, 0.049, 0.2},
      {0.5, 0.6, 0.7}};
  cases["bh"] = bh;
  const int n = 60;
  const auto base_a = Base(n, 1), base_b = Base(n, 2);
  const auto pa = Predictions(4, n, 10, 150, base_a);
  const auto pb_same = Predictions(5, n, 11, 150, base_a);
  const auto pb_diff = Predictions(5, n, 12, 150, base_b);
  cases["churn"].push_back({{"a", Rows(pa, 4, n)}, {"b", Rows(pb_same, 5, n)}});
  cases["churn"].push_back({{"a", Rows(pa, 4, n)}, {"b", Rows(pb_diff, 5, n)}});
  cases["floor"].push_back({{"pred", Rows(pa, 4, n)}, {"labels", ToInts(base_b)}});

  const Json want = RunReference(cases);
  ASSERT_FALSE(want.is_null());

  for (size_t i = 0; i < pairs.size(); ++i) {
    SCOPED_TRACE("two-sample case " + std::to_string(i));
    const Json& w = want["two_sample"][i];
    const auto perm = PermutationTest(pairs[i].a, pairs[i].b);
    ASSERT_TRUE(perm.ok());
    EXPECT_TRUE(perm->exact);
    EXPECT_EQ(perm->splits, w["perm_splits"].get<uint64_t>());
    EXPECT_NEAR(perm->p, w["perm_p"].get<double>(), kTol);
    const auto welch = WelchTest(pairs[i].a, pairs[i].b);
    ASSERT_TRUE(welch.ok());
    EXPECT_NEAR(welch->t, w["welch_t"].get<double>(), 1e-9);
    EXPECT_NEAR(welch->p, w["welch_p"].get<double>(), 1e-9);
    EXPECT_NEAR(welch->t, w["welch_t_sm"].get<double>(), 1e-9);
    EXPECT_NEAR(welch->df, w["welch_df"].get<double>(), 1e-9);
    EXPECT_NEAR(welch->ci_low, w["ci_low"].get<double>(), 1e-9);
    EXPECT_NEAR(welch->ci_high, w["ci_high"].get<double>(), 1e-9);
    const auto g = HedgesG(pairs[i].a, pairs[i].b);
    ASSERT_TRUE(g.ok());
    EXPECT_NEAR(*g, w["hedges_g"].get<double>(), 1e-9);
    EXPECT_NEAR(ProbabilityOfSuperiority(pairs[i].a, pairs[i].b),
                w["prob_a_greater"].get<double>(), kTol);
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    const auto p = FisherExact(t[0], t[1], t[2], t[3]);
    ASSERT_TRUE(p.ok());
    EXPECT_NEAR(*p, want["fisher"][i].get<double>(), 1e-12) << "table " << i;
  }
  for (size_t i = 0; i < quantiles.size(); ++i) {
    // Boost and scipy (Cephes) agree to about 2e-10 relative at odd df.
    const double want_q = want["t_quantile"][i].get<double>();
    EXPECT_NEAR(StudentQuantile(quantiles[i][0], quantiles[i][1]), want_q,
                1e-9 * std::abs(want_q));
  }
  for (size_t i = 0; i < bh.size(); ++i) {
    const auto r = BenjaminiHochberg(bh[i], 0.10);
    ASSERT_TRUE(r.ok());
    for (size_t j = 0; j < bh[i].size(); ++j) {
      EXPECT_NEAR(r->adjusted[j], want["bh"][i]["adjusted"][j].get<double>(), 1e-12);
      EXPECT_EQ(r->reject[j], want["bh"][i]["reject"][j].get<int>()) << i << "," << j;
    }
  }
  const std::vector<const std::vector<uint8_t>*> churn_b = {&pb_same, &pb_diff};
  for (size_t i = 0; i < churn_b.size(); ++i) {
    const Json& w = want["churn"][i];
    const auto c = ExcessChurn(pa, 4, *churn_b[i], 5, n);
    ASSERT_TRUE(c.ok());
    EXPECT_NEAR(c->d_aa, w["d_aa"].get<double>(), 1e-12);
    EXPECT_NEAR(c->d_bb, w["d_bb"].get<double>(), 1e-12);
    EXPECT_NEAR(c->d_ab, w["d_ab"].get<double>(), 1e-12);
    EXPECT_NEAR(c->excess, w["excess"].get<double>(), 1e-12);
    EXPECT_NEAR(c->p, w["p"].get<double>(), 1e-12);
    EXPECT_EQ(c->splits, w["splits"].get<uint64_t>());
  }
  double sigma2 = 0;
  const auto f = JordanFloor(pa, base_b, 4, {}, &sigma2);
  ASSERT_TRUE(f.ok());
  EXPECT_NEAR(*f, want["floor"][0]["floor"].get<double>(), 1e-12);
  EXPECT_NEAR(sigma2, want["floor"][0]["sigma2_s"].get<double>(), 1e-12);
}

}  // namespace
}  // namespace xw::stats
