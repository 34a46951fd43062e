// The two-stage schedule's pieces (include/xwires/hpo/schedule.h,
// hpo/driver.cc): the significant_diff objective against hand-computed
// values, the selection rules, option checks, and the per-point noise a
// replicated trial gives its GP.
#include <gtest/gtest.h>

#include <cmath>

#include "driver_run.h"
#include "xwires/core/significance.h"
#include "xwires/hpo/gp.h"
#include "xwires/hpo/schedule.h"
#include "xwires/hpo/search_driver.h"

namespace xw::hpo {
namespace {

// t(0.975, 6) = 2.4469118487916806 (scipy.stats.t.ppf).
constexpr double kT975Df6 = 2.4469118487916806;

TEST(SignificantDiffTest, LcbMatchesHandComputedValues) {
  // Delta = 0.1; s^2 = 0.002/3 a side, SE^2 = 2 (0.002/3)/4 = 1/3000; Welch
  // df = 6; LCB = 0.1 - t(0.975, 6) sqrt(1/3000) = 0.05532570613967089.
  const std::vector<double> a = {0.50, 0.52, 0.54, 0.56}, b = {0.40, 0.42, 0.44, 0.46};
  stats::TestSetInfo test;
  test.num_classes = 10;
  test.num_examples = 1000;
  auto r = stats::ComparePair({a, {}, {}}, {b, {}, {}}, test);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->welch_df, 6.0, 1e-9);
  EXPECT_NEAR(r->se2, 1.0 / 3000, 1e-12);
  EXPECT_NEAR(r->lcb, 0.1 - kT975Df6 * std::sqrt(1.0 / 3000), 1e-9);
  EXPECT_NEAR(r->lcb, 0.05532570613967089, 1e-9);
  // Zero spread: SE^2 is floored at the test set's share, Jordan's k-class
  // bound err / (n k) per run: (0.5 + 0.6) / 10000 / 4 = 2.75e-5; df = 6.
  const std::vector<double> c = {0.5, 0.5, 0.5, 0.5}, d = {0.4, 0.4, 0.4, 0.4};
  auto z = stats::ComparePair({c, {}, {}}, {d, {}, {}}, test);
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_NEAR(z->se2, 2.75e-5, 1e-12);
  EXPECT_NEAR(z->lcb, 0.08716828601147451, 1e-9);
  // Reversed sides: the bound is on |Delta|.
  auto rev = stats::ComparePair({b, {}, {}}, {a, {}, {}}, test);
  ASSERT_TRUE(rev.ok());
  EXPECT_NEAR(rev->lcb, r->lcb, 1e-12);
  // A difference inside the noise: 0.
  const std::vector<double> e = {0.50, 0.41, 0.56, 0.43};
  auto n = stats::ComparePair({e, {}, {}}, {b, {}, {}}, test);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->lcb, 0.0);
}

TEST(ScheduleTest, SelectCountRoundsHalfUpWithAtLeastOne) {
  EXPECT_EQ(SelectCount(0, 0.2), 0);
  EXPECT_EQ(SelectCount(1, 0.2), 1);
  EXPECT_EQ(SelectCount(5, 0.2), 1);
  EXPECT_EQ(SelectCount(8, 0.2), 2);   // 1.6
  EXPECT_EQ(SelectCount(10, 0.2), 2);
  EXPECT_EQ(SelectCount(13, 0.2), 3);  // 2.6
  EXPECT_EQ(SelectCount(16, 0.2), 3);  // 3.2
  EXPECT_EQ(SelectCount(3, 0.5), 2);   // 1.5 rounds up
  EXPECT_EQ(SelectCount(4, 1.0), 4);
}

TEST(ScheduleTest, ReplicatesExactlyTheTopShareOfEveryClosedRound) {
  ScheduleOptions s;
  s.round = 5;
  s.top_share = 0.4;  // 2 of 5
  // Proposal number = pending id; trial ids differ from them.
  std::vector<Proposal> p = {
      {1, 101, true, 0.10}, {2, 102, true, 0.30}, {3, 0, true, 0},  // 3 failed
      {4, 104, true, 0.30}, {5, 105, true, 0.20},                    // round 0
      {6, 106, true, 0.50}, {7, 107, true, 0.05}, {8, 0, false, 0},  // 8 running
      {9, 109, true, 0.40}, {10, 110, true, 0.45},                   // round 1
      {11, 111, true, 0.90}, {12, 112, true, 0.01}};                 // partial
  // Round 0: 4 finished -> round(1.6) = 2: 0.30 (proposal 2, earlier on the
  // tie) and 0.30 (4). Round 1 is open (8 runs); the partial round waits for
  // the end of screening.
  EXPECT_EQ(SelectForReplication(p, s, false), (std::vector<int64_t>{102, 104}));
  p[7] = {8, 108, true, 0.60};
  // Round 1: 0.60 (108), 0.50 (106); input order does not matter.
  std::reverse(p.begin(), p.end());
  EXPECT_EQ(SelectForReplication(p, s, false), (std::vector<int64_t>{102, 104, 108, 106}));
  // Screening ended: the last round holds 2 -> round(0.8) = 1.
  EXPECT_EQ(SelectForReplication(p, s, true),
            (std::vector<int64_t>{102, 104, 108, 106, 111}));
}

TEST(ScheduleTest, ConfirmsTheBestByLcb) {
  std::vector<Replicated> r = {{7, 0.02, 0.01}, {3, 0.10, 0.2}, {5, 0.10, 0.01}, {9, 0.0, 1}};
  EXPECT_EQ(SelectForConfirmation(r, 2), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(SelectForConfirmation(r, 10).size(), 4u);
  EXPECT_TRUE(SelectForConfirmation(r, 0).empty());
}

std::string ErrorOf(const std::string& json) {
  auto c = ParseDriverConfigJson(json);
  return c.ok() ? "" : c.status().message();
}

TEST(ScheduleTest, BadOptionsAreRefusedWithTheirReason) {
  EXPECT_NE(ErrorOf(R"({"schedule": {"replicas": 3}})").find(
                "schedule.replicas: 3 is too few; at least 4 replicas a side are needed"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"confirm_replicas": 2}})").find("p < 0.05"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"top_share": 0}})")
                .find("schedule.top_share: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"top_share": 1.5}})").find("schedule.top_share"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"round": 0}})").find("schedule.round"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"confirm_perturb": "bits"}})")
                .find("schedule.confirm_perturb"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"perturb": "bits"}})").find("schedule.perturb"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"objective": "abs_acc_diff", "schedule": {"kind": "two_stage"}})")
                .find("two_stage needs the objective significant_diff"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"kind": "fast"}})").find("schedule.kind"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schedule": {"k": 5}})").find("schedule"), std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"schedule": {"top_share": 1, "replicas": 4}})"), "");
}

TEST(ScheduleTest, DefaultSearchIsTwoStageAndRoundTrips) {
  const DriverConfig d = DefaultDriverConfig();
  EXPECT_EQ(d.search.objective, Objective::kSignificantDiff);
  EXPECT_TRUE(IsTwoStage(d.schedule, d.search.objective));
  EXPECT_FALSE(IsTwoStage(d.schedule, Objective::kAbsAccDiff));
  EXPECT_EQ(d.schedule.replicas, 5);
  EXPECT_EQ(d.schedule.top_share, 0.2);
  // Both stages draw fresh training seeds; the confirmation counts seed
  // replicas 5..8, none of which took part in the selection (0..4).
  EXPECT_EQ(d.schedule.perturb, "seed");
  EXPECT_EQ(d.schedule.confirm_perturb, "seed");
  EXPECT_EQ(d.schedule.confirm_replicas, 4);
  EXPECT_EQ(ConfirmFirstReplica(d.schedule), 5);
  EXPECT_EQ(ErrorOf(R"({"schedule": {"perturb": "ulp", "confirm_perturb": "ulp"}})"), "");
  auto c = ParseDriverConfigJson(
      R"({"schedule": {"round": 7, "top_share": 0.5, "replicas": 6, "perturb": "seed",
          "confirm_top": 1, "confirm_replicas": 8, "confirm_perturb": "ulp", "fdr_q": 0.05}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto back = ParseDriverConfigJson(DriverConfigToJson(*c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->schedule, c->schedule);
  EXPECT_EQ(back->schedule.round, 7);
  EXPECT_EQ(back->schedule.confirm_perturb, "ulp");
  // Another family: its replica 0 is the screened trial, so it starts at 1.
  EXPECT_EQ(ConfirmFirstReplica(back->schedule), 1);
  ScheduleOptions same = back->schedule;
  same.confirm_perturb = same.perturb;
  EXPECT_EQ(ConfirmFirstReplica(same), 6);
}

// A replicated trial reaches the GP with y = -LCB and its SE^2 as that
// point's own noise variance; the others keep the shared noise. With fixed
// kernel hyperparameters, the posterior variance at the replicated point
// follows its SE^2.
TEST(ScheduleTest, ReplicatedTrialGivesItsGpTheLcbAndSe2) {
  auto config = ParseDriverConfigJson(
      R"({"dimensions": [{"name": "lr", "type": "real", "low": 1e-4, "high": 0.1, "log": true}],
          "no_subspaces": true})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const std::vector<internal::ToldTrial> told = {
      {11, {1e-3}, 0.20}, {12, {1e-2}, 0.30}, {13, {3e-2}, 0.25}, {14, {2e-4}, 0.05}};
  auto posterior_var = [&](double se2, GpOptimizer* out) {
    internal::ObservationOf obs = [se2](int64_t t) -> std::optional<internal::ReplicaObservation> {
      if (t != 12) return std::nullopt;
      return internal::ReplicaObservation{0.12, se2, 0.01};
    };
    auto opt = internal::RebuildOptimizer(config->search, 0, told, obs);
    EXPECT_TRUE(opt.ok()) << opt.status().ToString();
    EXPECT_EQ(opt->num_observations(), 4);
    EXPECT_EQ(opt->target(0), -0.20);
    EXPECT_TRUE(std::isnan(opt->noise_variance(0)));
    EXPECT_EQ(opt->target(1), -0.12);
    EXPECT_EQ(opt->noise_variance(1), se2);
    // The optimiser's observations under one fixed kernel: the variance at
    // the replicated point, in raw units.
    std::vector<double> x, y, noise;
    for (int i = 0; i < opt->num_observations(); ++i) {
      const std::vector<double> u = opt->space().ToUnit(opt->observation(i));
      x.insert(x.end(), u.begin(), u.end());
      y.push_back(opt->target(i));
    }
    double mean = 0, sd = 1;
    TargetNormalization(y, &mean, &sd);
    for (int i = 0; i < opt->num_observations(); ++i) {
      noise.push_back(opt->noise_variance(i) / (sd * sd));
    }
    GaussianProcess gp(1, GpHyperparameters{1.0, {0.3}, 0.05});
    EXPECT_TRUE(gp.Fit(x, y, noise).ok());
    double m = 0, v = 0;
    gp.Predict(&x[1], &m, &v);
    if (out != nullptr) *out = std::move(*opt);
    return v * sd * sd;
  };
  const double precise = posterior_var(1e-6, nullptr);
  const double noisy = posterior_var(1e-3, nullptr);
  // A precise replicated point pins the posterior: its variance is at most
  // its own noise; a noisy one leaves more.
  EXPECT_LE(precise, 1e-6);
  EXPECT_GT(noisy, 10 * precise);
  EXPECT_LE(noisy, 1e-3);
  // Without statistics every point shares the fitted noise.
  auto plain = internal::RebuildOptimizer(config->search, 0, told, {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->target(1), -0.30);
  EXPECT_TRUE(std::isnan(plain->noise_variance(1)));
}

}  // namespace
}  // namespace xw::hpo
