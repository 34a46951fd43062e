// Known values of the significance statistics (hand-computed) and the
// verdict rules of ComparePair, one case per branch.
#include "xwires/core/significance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "xwires/core/rng.h"

namespace xw::stats {
namespace {

using Vec = std::vector<double>;

TEST(SignificanceTest, ExactPermutationOfSeparatedSamples) {
  // 4 + 4 values, fully separated: only the observed split and its mirror
  // reach |Δ| = 4, so p = 2 / C(8, 4) = 2 / 70.
  const auto r = PermutationTest(Vec{5, 6, 7, 8}, Vec{1, 2, 3, 4});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->splits, 70u);
  EXPECT_DOUBLE_EQ(r->p, 2.0 / 70);
  // Every value equal: every split ties the observed Δ = 0.
  const auto tie =
      PermutationTest(Vec{0.5, 0.5, 0.5, 0.5}, Vec{0.5, 0.5, 0.5, 0.5});
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(tie->p, 1.0);
}

TEST(SignificanceTest, MonteCarloBeyondTheExactLimitIsDeterministic) {
  const Vec a{0.61, 0.58, 0.63, 0.60, 0.59, 0.64, 0.57, 0.62};
  const Vec b{0.55, 0.60, 0.56, 0.58, 0.54, 0.59, 0.57, 0.53};
  const auto exact = PermutationTest(a, b);
  SignificanceOptions opt;
  opt.max_exact_splits = 1000;  // C(16, 8) = 12,870 splits
  opt.monte_carlo_resamples = 20000;
  const auto mc1 = PermutationTest(a, b, opt);
  const auto mc2 = PermutationTest(a, b, opt);
  ASSERT_TRUE(exact.ok() && mc1.ok() && mc2.ok());
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->splits, 12870u);
  EXPECT_FALSE(mc1->exact);
  EXPECT_EQ(mc1->splits, 20000u);
  EXPECT_EQ(mc1->p, mc2->p);  // same seed, same bits
  // Within 4 binomial sd of the exact p (two-sided = 2 x a one-sided share).
  const double half = exact->p / 2;
  EXPECT_NEAR(mc1->p, exact->p, 8 * std::sqrt(half * (1 - half) / 20000));
  EXPECT_LT(exact->p, 0.05);
}

TEST(SignificanceTest, WelchKnownValues) {
  // Means 2.5 and 5, variances 5/3 and 20/3: SE^2 = 25/12, t = -sqrt(3),
  // df = (25/12)^2 / ((5/12)^2/3 + (5/3)^2/3) = 75/17.
  const auto w = WelchTest(Vec{1, 2, 3, 4}, Vec{2, 4, 6, 8});
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(w->se2, 25.0 / 12, 1e-14);
  EXPECT_NEAR(w->t, -std::sqrt(3.0), 1e-14);
  EXPECT_NEAR(w->df, 75.0 / 17, 1e-12);
  EXPECT_NEAR((w->ci_low + w->ci_high) / 2, -2.5, 1e-12);
  // Constant sides: SE = 0, t = -inf, p = 0, df = K_A + K_B - 2.
  const auto z = WelchTest(Vec{0.1, 0.1, 0.1, 0.1}, Vec{0.2, 0.2, 0.2, 0.2});
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(std::isinf(z->t) && z->t < 0);
  EXPECT_EQ(z->p, 0.0);
  EXPECT_EQ(z->df, 6.0);
  EXPECT_FALSE(WelchTest(Vec{1}, Vec{1, 2}).ok());
}

TEST(SignificanceTest, HedgesGAndSuperiority) {
  // Δ = 1, both variances 2/3 (so the pooled sd is sqrt(2/3)), m = 6:
  // J = Γ(3) / (sqrt(3) Γ(2.5)).
  const double j = std::tgamma(3.0) / (std::sqrt(3.0) * std::tgamma(2.5));
  const auto g = HedgesG(Vec{1, 2, 3, 2}, Vec{0, 1, 2, 1});
  ASSERT_TRUE(g.ok());
  EXPECT_NEAR(*g, j * 1.0 / std::sqrt(2.0 / 3), 1e-12);
  EXPECT_EQ(*HedgesG(Vec{1, 2}, Vec{1, 2}), 0.0);
  // a = {1, 2, 3, 4} against b = {2, 2, 5, 0}, per a: 1 beats 0 (1); 2 ties
  // 2, 2 and beats 0 (2); 3 beats 2, 2, 0 (3); 4 likewise (3): 9 of 16.
  EXPECT_DOUBLE_EQ(ProbabilityOfSuperiority(Vec{1, 2, 3, 4}, Vec{2, 2, 5, 0}),
                   9.0 / 16);
}

TEST(SignificanceTest, FisherExactKnownValues) {
  // 5/5 against 0/5: only the two extreme tables, each 1/252.
  EXPECT_NEAR(*FisherExact(5, 0, 0, 5), 2.0 / 252, 1e-15);
  EXPECT_EQ(*FisherExact(0, 4, 0, 4), 1.0);  // no collapses anywhere
  EXPECT_NEAR(*FisherExact(2, 3, 2, 3), 1.0, 1e-14);
  EXPECT_FALSE(FisherExact(-1, 1, 1, 1).ok());
}

TEST(SignificanceTest, BenjaminiHochbergKnownValues) {
  const auto r = BenjaminiHochberg(Vec{0.03, 0.5, 0.01, 0.02}, 0.10);
  ASSERT_TRUE(r.ok());
  // Sorted 0.01, 0.02, 0.03, 0.5 -> 0.04, 0.04, 0.04, 0.5.
  EXPECT_NEAR(r->adjusted[0], 0.04, 1e-15);
  EXPECT_NEAR(r->adjusted[1], 0.5, 1e-15);
  EXPECT_NEAR(r->adjusted[2], 0.04, 1e-15);
  EXPECT_NEAR(r->adjusted[3], 0.04, 1e-15);
  EXPECT_EQ(r->reject, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_FALSE(BenjaminiHochberg(Vec{0.1, 1.5}).ok());
  EXPECT_TRUE(BenjaminiHochberg(Vec{})->adjusted.empty());
}

TEST(SignificanceTest, DegenerateModelRules) {
  // At chance: 10 classes, 1000 examples: 0.1 + 3 sqrt(0.09 / 1000) =
  // 0.12846049894151541 (Python: 0.1 + 3 * math.sqrt(0.09 / 1000)).
  EXPECT_NEAR(ChanceThreshold(10, 1000), 0.12846049894151541, 1e-15);
  EXPECT_TRUE(AtChance(0.128, 10, 1000));
  EXPECT_FALSE(AtChance(0.129, 10, 1000));
  EXPECT_TRUE(AtChance(0.0, 10, 1000));  // below chance counts too
  // 100 classes, 10,000 examples: 0.01 + 3 sqrt(0.0099 / 10000) = 0.012985.
  EXPECT_TRUE(AtChance(0.0129, 100, 10000));
  EXPECT_FALSE(AtChance(0.0131, 100, 10000));
  EXPECT_FALSE(AtChance(0.05, 1, 10000));  // k < 2: no rule
  // The replicas' collapse rule is the same threshold.
  EXPECT_EQ(IsCollapsed(0.128, true, 10, 1000), AtChance(0.128, 10, 1000));
  EXPECT_EQ(IsCollapsed(0.129, true, 10, 1000), AtChance(0.129, 10, 1000));
  // Exploding: above 10 ln(10) = 23.025850929940457, or non-finite.
  EXPECT_FALSE(LossExploded(23.02, 10));
  EXPECT_TRUE(LossExploded(23.03, 10));
  EXPECT_TRUE(LossExploded(5.8540646686793925e19, 10));
  EXPECT_TRUE(LossExploded(std::nan(""), 10));
  EXPECT_TRUE(LossExploded(INFINITY, 10));
  EXPECT_FALSE(LossExploded(2.302585, 10));  // the uniform prediction
  EXPECT_TRUE(LossExploded(46.06, 100));     // 10 ln(100) = 46.0517
  EXPECT_FALSE(LossExploded(46.05, 100));
}

TEST(SignificanceTest, CollapseRuleAndLowerConfidenceBound) {
  // 10 classes, 10,000 examples: chance 0.1 + 3 x 0.003 = 0.109.
  EXPECT_TRUE(IsCollapsed(0.108, true, 10, 10000));
  EXPECT_FALSE(IsCollapsed(0.110, true, 10, 10000));
  EXPECT_TRUE(IsCollapsed(0.9, false, 10, 10000));
  // t(0.975, 4) = 2.7764451051977987.
  EXPECT_NEAR(StudentQuantile(4, 0.975), 2.7764451051977987, 1e-12);
  EXPECT_NEAR(LowerConfidenceBound(-0.2, 0.0004, 4),
              0.2 - 2.7764451051977987 * 0.02, 1e-12);
  EXPECT_EQ(LowerConfidenceBound(0.01, 0.0004, 4), 0.0);
  EXPECT_EQ(*ParseVerdict("collapse_driven"), Verdict::kCollapseDriven);
  EXPECT_FALSE(ParseVerdict("maybe").ok());
}

// A 10-class test set of 1,000 examples, without predictions.
TestSetInfo Cifar1k() { return TestSetInfo{10, 1000, {}}; }

Verdict VerdictOf(const Vec& a, const Vec& b) {
  const auto st = ComparePair({a, {}, {}}, {b, {}, {}}, Cifar1k());
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  return st.ok() ? st->verdict : Verdict::kInsufficient;
}

TEST(SignificanceTest, VerdictRules) {
  const Vec good{0.456, 0.471, 0.430, 0.490, 0.462};
  // Separated, no collapse.
  EXPECT_EQ(VerdictOf(good, {0.219, 0.255, 0.180, 0.240, 0.201}),
            Verdict::kSignificant);
  // Overlapping, no collapse.
  EXPECT_EQ(VerdictOf(good, {0.470, 0.440, 0.481, 0.452, 0.465}),
            Verdict::kWithinNoise);
  // Every B replica collapsed (acc <= 0.1 + 3 x 0.0095): Fisher p = 2/252.
  EXPECT_EQ(VerdictOf(good, {0.10, 0.11, 0.09, 0.10, 0.12}),
            Verdict::kCollapseDriven);
  // Three of B collapsed, its two survivors above A: nothing passes, and B
  // has fewer than 3 survivors.
  EXPECT_EQ(VerdictOf(good, {0.10, 0.10, 0.10, 0.50, 0.52}),
            Verdict::kInsufficient);
  // Two of B collapsed, its three survivors like A: survivors tested, not
  // different; Fisher p = 0.44.
  EXPECT_EQ(VerdictOf(good, {0.10, 0.10, 0.460, 0.445, 0.470}),
            Verdict::kWithinNoise);
  // One of B collapsed, its four survivors far below A: significant on the
  // survivors (p = 2/126).
  EXPECT_EQ(
      VerdictOf({0.60, 0.61, 0.62, 0.60, 0.63}, {0.10, 0.30, 0.31, 0.29, 0.30}),
      Verdict::kSignificant);
}

TEST(SignificanceTest, FloorGuardsNearlyDeterministicProfiles) {
  // Δ = 0.0005 with tiny spread: p = 2/252 and P(A>B) = 1, but the floor of
  // a 1,000-example test set at 50% error is sqrt(0.5 / 10^4) = 0.0071.
  const auto st = ComparePair(
      {Vec{0.5005, 0.5006, 0.5007, 0.5005, 0.5006}, {}, {}},
      {Vec{0.5000, 0.5001, 0.5000, 0.5002, 0.5001}, {}, {}}, Cifar1k());
  ASSERT_TRUE(st.ok());
  EXPECT_LT(st->permutation_p, 0.05);
  EXPECT_EQ(st->prob_a_greater, 1.0);
  EXPECT_NEAR(st->floor, std::sqrt((1 - 0.50058) / 1e4), 1e-4);
  EXPECT_FALSE(st->floor_from_predictions);
  EXPECT_EQ(st->verdict, Verdict::kWithinNoise);
  // SE^2 is floored at f_A^2/5 + f_B^2/5, so the LCB is 0.
  EXPECT_NEAR(st->se2,
              (st->a.floor * st->a.floor + st->b.floor * st->b.floor) / 5,
              1e-18);
  EXPECT_EQ(st->lcb, 0.0);
}

TEST(SignificanceTest, ComparePairWithPredictions) {
  // 4 classes, 80 examples (a block of 8, ten times); each side's replicas
  // agree with each other; in each block A errs on example 7, B on 4-7.
  const std::vector<uint8_t> block{0, 1, 2, 3, 0, 1, 2, 3};
  const std::vector<uint8_t> ra{0, 1, 2, 3, 0, 1, 2, 0};
  const std::vector<uint8_t> rb{0, 1, 2, 3, 1, 2, 3, 0};
  std::vector<uint8_t> labels, pa, pb;
  for (int i = 0; i < 10; ++i)
    labels.insert(labels.end(), block.begin(), block.end());
  for (int r = 0; r < 40; ++r) {
    pa.insert(pa.end(), ra.begin(), ra.end());
    pb.insert(pb.end(), rb.begin(), rb.end());
  }
  // B's 0.5 is above the collapse line 0.25 + 3 sqrt(0.1875 / 80) = 0.395.
  const Vec acc_a(4, 7.0 / 8), acc_b(4, 4.0 / 8);
  const TestSetInfo test{4, 80, labels};
  const auto st = ComparePair({acc_a, {}, pa}, {acc_b, {}, pb}, test);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_TRUE(st->has_predictions);
  EXPECT_TRUE(st->floor_from_predictions);
  EXPECT_EQ(st->churn_aa, 0.0);
  EXPECT_EQ(st->churn_bb, 0.0);
  EXPECT_EQ(st->churn_ab, 3.0 / 8);  // examples 4, 5 and 6
  EXPECT_EQ(st->excess_churn, 3.0 / 8);
  EXPECT_NEAR(st->excess_churn_p, 2.0 / 70, 1e-15);  // the split and its mirror
  EXPECT_EQ(st->floor, 0.0);  // every replica of a side errs identically
  EXPECT_EQ(st->verdict, Verdict::kSignificant);
  // Predictions on one side only, or without labels: refused.
  EXPECT_FALSE(ComparePair({acc_a, {}, pa}, {acc_b, {}, {}}, test).ok());
  EXPECT_FALSE(
      ComparePair({acc_a, {}, pa}, {acc_b, {}, pb}, TestSetInfo{4, 80, {}})
          .ok());
}

// The spread guard: replicas of a family that keeps the trial's initial
// draw (ulp, order) that did not spread cannot measure the draw-to-draw
// noise, so the pair is `insufficient`, never `significant`; seed replicas
// (replicas_redraw) keep the verdict the rules give.
TEST(SignificanceTest, UlpReplicasWithoutSpreadAreInsufficient) {
  const std::vector<uint8_t> block{0, 1, 2, 3, 0, 1, 2, 3};
  const std::vector<uint8_t> ra{0, 1, 2, 3, 0, 1, 2, 0};
  const std::vector<uint8_t> rb{0, 1, 2, 3, 1, 2, 3, 0};
  std::vector<uint8_t> labels, pa, pb;
  for (int i = 0; i < 10; ++i)
    labels.insert(labels.end(), block.begin(), block.end());
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 10; ++i) {
      pa.insert(pa.end(), ra.begin(), ra.end());
      pb.insert(pb.end(), rb.begin(), rb.end());
    }
  }
  const TestSetInfo test{4, 80, labels};
  SignificanceOptions ulp;
  ulp.replicas_redraw = false;
  // 1. Zero spread: every replica of a side identical (accuracies 7/8, 4/8).
  const Vec acc_a(4, 7.0 / 8), acc_b(4, 4.0 / 8);
  const auto seed = ComparePair({acc_a, {}, pa}, {acc_b, {}, pb}, test);
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  EXPECT_EQ(seed->verdict, Verdict::kSignificant);
  EXPECT_EQ(seed->verdict_reason, "");
  const auto flat = ComparePair({acc_a, {}, pa}, {acc_b, {}, pb}, test, ulp);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(flat->verdict, Verdict::kInsufficient);
  EXPECT_NE(flat->verdict_reason.find("profile A's replica accuracies are all "
                                      "equal"),
            std::string::npos)
      << flat->verdict_reason;
  // The statistics themselves are unchanged: only the verdict is guarded.
  EXPECT_EQ(flat->permutation_p, seed->permutation_p);
  EXPECT_EQ(flat->mean_diff, seed->mean_diff);

  // 2. A little spread: replica r of each side also errs on examples
  // 0..r-1 (accuracies 70..67 / 80 against 40..37 / 80, fully separated).
  // D_AA = D_BB = mean |i - j| / 80 = (5/3) / 80, D_AB about 30/80: the
  // within-profile churn is far below half the cross-profile churn.
  Vec sa(4), sb(4);
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < r; ++i) {
      pa[r * 80 + i] = static_cast<uint8_t>((labels[i] + 1) % 4);
      pb[r * 80 + i] = static_cast<uint8_t>((labels[i] + 1) % 4);
    }
    sa[r] = (70.0 - r) / 80;
    sb[r] = (40.0 - r) / 80;
  }
  const auto seed2 = ComparePair({sa, {}, pa}, {sb, {}, pb}, test);
  ASSERT_TRUE(seed2.ok()) << seed2.status().ToString();
  EXPECT_EQ(seed2->verdict, Verdict::kSignificant);
  EXPECT_NEAR(seed2->churn_aa, (5.0 / 3) / 80, 1e-15);
  EXPECT_NEAR(seed2->churn_bb, (5.0 / 3) / 80, 1e-15);
  EXPECT_GT(seed2->churn_ab, 0.3);
  const auto low = ComparePair({sa, {}, pa}, {sb, {}, pb}, test, ulp);
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  EXPECT_EQ(low->verdict, Verdict::kInsufficient);
  EXPECT_NE(low->verdict_reason.find("within-profile churn"), std::string::npos)
      << low->verdict_reason;

  // 3. Spread comparable to the cross-profile churn: each replica errs on
  // its own 7 + r examples (A in 0..39, B in 40..79), so D_AA = D_BB = D_AB
  // = 17/80; the guard does not apply and the rules' verdict stands.
  std::vector<uint8_t> wa(4 * 80), wb(4 * 80);
  Vec ca(4), cb(4);
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 80; ++i) {
      const bool a_errs = i >= r * 10 && i < r * 10 + 7 + r;
      const bool b_errs = i >= 40 + r * 10 && i < 40 + r * 10 + 7 + r;
      wa[r * 80 + i] = static_cast<uint8_t>((labels[i] + (a_errs ? 1 : 0)) % 4);
      wb[r * 80 + i] = static_cast<uint8_t>((labels[i] + (b_errs ? 1 : 0)) % 4);
    }
    ca[r] = cb[r] = (73.0 - r) / 80;
  }
  const auto wide = ComparePair({ca, {}, wa}, {cb, {}, wb}, test, ulp);
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_NEAR(wide->churn_aa, 17.0 / 80, 1e-15);
  EXPECT_NEAR(wide->churn_ab, 17.0 / 80, 1e-15);
  EXPECT_EQ(wide->verdict_reason, "");
  EXPECT_EQ(wide->verdict, Verdict::kWithinNoise);

  SignificanceOptions bad = ulp;
  bad.min_spread_ratio = 1.5;
  EXPECT_FALSE(ComparePair({ca, {}, wa}, {cb, {}, wb}, test, bad).ok());
}

TEST(SignificanceTest, BadInputIsRefusedWithTheReason) {
  const Vec four{0.4, 0.5, 0.4, 0.5};
  const auto few =
      ComparePair({Vec{0.4, 0.5, 0.4}, {}, {}}, {four, {}, {}}, Cifar1k());
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("cannot reach p < 0.05"),
            std::string::npos)
      << few.status().message();
  EXPECT_FALSE(
      ComparePair({Vec{0.4, 0.5, 1.2, 0.5}, {}, {}}, {four, {}, {}}, Cifar1k())
          .ok());
  const std::vector<uint8_t> flags{1, 1};
  EXPECT_FALSE(ComparePair({four, flags, {}}, {four, {}, {}}, Cifar1k()).ok());
  EXPECT_FALSE(
      ComparePair({four, {}, {}}, {four, {}, {}}, TestSetInfo{1, 1000, {}})
          .ok());
  SignificanceOptions lower;
  lower.min_replicas = 3;  // never below 4
  EXPECT_FALSE(
      ComparePair({four, {}, {}}, {four, {}, {}}, Cifar1k(), lower).ok());
  SignificanceOptions alpha;
  alpha.alpha = 1.5;
  EXPECT_FALSE(
      ComparePair({four, {}, {}}, {four, {}, {}}, Cifar1k(), alpha).ok());
  // A non-finite loss counts as a collapse.
  const std::vector<uint8_t> lost{0, 1, 1, 1};
  const auto st = ComparePair({four, lost, {}}, {four, {}, {}}, Cifar1k());
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->a.collapses, 1);
  EXPECT_EQ(st->b.collapses, 0);
}

// Share of `significant` verdicts over `draws` pairs of K = 5 accuracies from
// normal distributions with sd 0.02 and means 0.5 and 0.5 + shift (10
// classes, 10,000 test examples: floor about 0.002).
double SignificantShare(double shift, int draws, uint64_t seed) {
  const Philox rng(seed, StreamId("test/aa"));
  int significant = 0;
  for (int d = 0; d < draws; ++d) {
    Vec a(5), b(5);
    for (int r = 0; r < 5; ++r) {
      a[r] = 0.5 + shift + 0.02 * rng.Normal(static_cast<uint64_t>(d) * 10 + r);
      b[r] = 0.5 + 0.02 * rng.Normal(static_cast<uint64_t>(d) * 10 + 5 + r);
    }
    const auto st =
        ComparePair({a, {}, {}}, {b, {}, {}}, TestSetInfo{10, 10000, {}});
    EXPECT_TRUE(st.ok());
    significant += st.ok() && st->verdict == Verdict::kSignificant;
  }
  return static_cast<double>(significant) / draws;
}

TEST(SignificanceTest, AaFalsePositiveShareAndPower) {
  // A/A: the exact test's size at K = 5 is 12/252 = 0.048; the P(A>B) and
  // floor conditions only lower it. 2,000 draws: binomial sd 0.005.
  const double aa = SignificantShare(0.0, 2000, 1);
  EXPECT_LE(aa, 0.06) << "A/A share " << aa;
  EXPECT_GE(aa, 0.02) << "A/A share " << aa;  // not a test that never fires
  // A shift of 2.5 sd is found most of the time (Welch power ~0.9 at d = 2.5).
  const double power = SignificantShare(0.05, 500, 2);
  EXPECT_GE(power, 0.75) << "power " << power;
  std::printf(
      "A/A significant share %.4f (2000 draws), power at 2.5 sd %.3f (500)\n",
      aa, power);
}

}  // namespace
}  // namespace xw::stats
