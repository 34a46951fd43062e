// Significance of a cross-profile divergence: is the accuracy difference of two
// profiles, each trained K times under perturbations the profile itself treats
// as arbitrary ("replicas"), larger than the chaotic run-to-run noise of
// training? Method, literature and defaults: docs/significance.md.
//
// Every formula of the method lives here, once; the dataset (fsck recomputes
// verdicts), the search (the significant_diff objective) and the CLI call it.
// Notation: profile A has K_A replicas with test accuracies a_1..a_KA, B has
// K_B replicas b_1..b_KB; n test examples, k classes.
//
//   mean, sd        x̄ = Σx/K, s = sqrt(Σ(x - x̄)^2 / (K - 1))
//   mean_diff       Δ = ā - b̄   (positive: A more accurate)
//   collapse        a replica whose loss became non-finite, or whose accuracy
//                   is <= 1/k + 3 sqrt((1/k)(1 - 1/k)/n)   (chance plus three
//                   binomial standard errors of a chance-level classifier)
//   permutation p   T(split) = mean(first group) - mean(second group) over all
//                   C(K_A + K_B, K_A) assignments of the pooled accuracies to
//                   groups of sizes K_A, K_B (the observed one included);
//                   p = min(1, 2 min(P(T >= Δ), P(T <= Δ))), comparisons with a
//                   tolerance of 100 eps |Δ| (scipy.stats.permutation_test's
//                   two-sided rule). Above max_exact_splits: Monte Carlo over
//                   `monte_carlo_resamples` Philox-drawn splits (stream
//                   "stats/permutation", key seed), one-sided p = (hits + 1) /
//                   (resamples + 1).
//   Welch           SE^2 = s_A^2/K_A + s_B^2/K_B, t = Δ / SE,
//                   ν = SE^4 / ((s_A^2/K_A)^2/(K_A-1) + (s_B^2/K_B)^2/(K_B-1)),
//                   p = 2 (1 - F_t,ν(|t|)), CI = Δ ± F_t,ν^-1(0.975) SE.
//                   SE = 0: t = ±inf (p = 0) if Δ != 0, NaN (p = 1) if Δ = 0,
//                   and ν = K_A + K_B - 2.
//   Hedges' g       g = J(m) Δ / s_p, s_p^2 = ((K_A-1)s_A^2 + (K_B-1)s_B^2)/m,
//                   m = K_A + K_B - 2, J(m) = Γ(m/2) / (sqrt(m/2) Γ((m-1)/2))
//                   (exact small-sample correction); 0 if Δ = 0, ±inf if
//                   s_p = 0.
//   P(A>B)          (#{(i,j): a_i > b_j} + #{a_i = b_j} / 2) / (K_A K_B)
//                   (= Mann-Whitney U_A / (K_A K_B), Vargha-Delaney A12).
//   Fisher p        two-sided exact p of the 2x2 table [[c_A, K_A - c_A],
//                   [c_B, K_B - c_B]] (c = collapses): the sum of the
//                   hypergeometric probabilities of all tables with the same
//                   margins that are no more probable than the observed one
//                   (relative tolerance 1e-7, as scipy.stats.fisher_exact).
//   survivors       the permutation test and Δ on non-collapsed replicas only;
//                   run when each side has >= min_survivors (3) of them.
//   churn           d(i, j) = fraction of test examples on which replicas i
//                   and j predict different classes. D_AA, D_BB = mean over
//                   within-profile pairs i < j, D_AB = mean over all pairs
//                   (A_i, B_j). Excess churn E = D_AB - (D_AA + D_BB)/2,
//                   p = P(E' >= E) over the same label splits as the
//                   permutation test (one sided: only a larger cross-profile
//                   disagreement is evidence).
//   floor           Jordan's a-priori test-set floor of one run's accuracy sd:
//                   f = sqrt(Σ_i e_i (1 - e_i)) / n, e_i = share of a profile's
//                   non-collapsed replicas (all, if every one collapsed) that
//                   misclassify example i. Without predictions it is
//                   approximated by Jordan's k-class bound sqrt(err / (n k)),
//                   err = 1 - the mean accuracy of those replicas. The pair's
//                   floor is sqrt((f_A^2 + f_B^2) / 2).
//   sigma2_s        Jordan's distribution-wise variance of one profile,
//                   n/(n-1) (s^2 - Σ_i v_i / n^2), v_i the sample variance
//                   (ddof 1) over replicas of the 0/1 error on example i.
//   SE^2 (search)   se2 = max(SE^2, f_A^2/K_A + f_B^2/K_B): Welch's SE^2
//                   floored at what the test set alone contributes.
//   LCB             max(0, |Δ| - F_t,ν^-1(0.975) sqrt(se2)); the search's
//                   `significant_diff` objective, with se2 its noise variance.
//   BH              Benjamini-Hochberg adjusted p_(i) = min_{j >= i} m p_(j)/j
//                   (capped at 1); reject where adjusted <= q.
//
// Verdict (alpha = 0.05; a sample "passes" when its permutation p < alpha,
// P(A>B) lies outside [0.25, 0.75] and |Δ| >= 2 x the pair's floor):
//   no replica collapsed:      significant if all replicas pass, else
//                              within_noise.
//   some replica collapsed:    significant if the survivors pass (>= 3 a side);
//                              else collapse_driven if Fisher p < alpha or all
//                              replicas pass; else insufficient if a side has
//                              < 3 survivors; else within_noise.
//   spread guard (opt.replicas_redraw false: the replicas came from a family
//   that keeps the trial's initial draw, `ulp` or `order`): the replicas
//   measure the chaos around one draw, which equals the draw-to-draw noise
//   only once training is chaotic enough to forget the draw. They did not
//   spread when a side's accuracies are all equal, or, with
//   predictions, when min(D_AA, D_BB) < min_spread_ratio (0.5) x D_AB. The
//   verdict is then insufficient, whatever the rules above gave, with
//   verdict_reason saying which condition held. Why 0.5: in the chaotic
//   regime a one-weight nudge already gives >= 0.8 of a full reseed's
//   disagreement (Jordan, ICLR 2024, App. D.2: 5.14% vs 5.19% at 128
//   epochs, 7.0-7.5% vs ~8.5% in short runs), and under no profile effect
//   D_AB is a reseed disagreement; a ratio below 0.5 (leaving room for the
//   sampling error of 10 pairs at K = 5) says the perturbation did not
//   decorrelate the replicas from their shared draw, so the cross-profile
//   gap cannot be compared with their spread. Measured A/A shares:
//   docs/significance.md.
// K_A or K_B < 4 is refused (InvalidArgument): with 3 + 3 replicas the smallest
// exact two-sided permutation p is 2/20 = 0.1, so p < 0.05 is unreachable.
//
// Thread-safety: every function is pure (no shared state) and may run
// concurrently, and runs on the calling thread. Results are deterministic:
// the sums run in a fixed order and Monte Carlo splits are Philox draws, so
// the same inputs give the same bits on every run. The t and hypergeometric
// values come from Boost.Math over the C library's exp/log, so their last
// bits may differ between platforms.
#ifndef XWIRES_CORE_SIGNIFICANCE_H_
#define XWIRES_CORE_SIGNIFICANCE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xwires/core/status.h"

namespace xw::stats {

struct SignificanceOptions {
  double alpha = 0.05;             // level of the permutation and Fisher tests
  double superiority_low = 0.25;   // P(A>B) must lie outside [low, high]
  double superiority_high = 0.75;  //   (Bouthillier et al.'s gamma = 0.75)
  double floor_multiple = 2.0;     // |Δ| >= floor_multiple x the pair's floor
  double collapse_se_multiple = 3.0;  // collapse: acc <= chance + this x SE
  int min_replicas = 4;            // fewer replicas on a side: InvalidArgument
                                   //   (values below 4 are refused too)
  int min_survivors = 3;           // survivors-only test needs this many a side
  double confidence = 0.95;        // Welch CI and LCB level (two-sided)
  // Enumerate all splits while C(K_A + K_B, K_A) <= this (K = 10 a side is
  // 184,756), else Monte Carlo with monte_carlo_resamples splits.
  uint64_t max_exact_splits = 1000000;
  int monte_carlo_resamples = 100000;
  uint64_t seed = 0;  // Philox key of the Monte Carlo splits
  // True when each replica redraws the trial's arbitrary choices (family
  // `seed`); false for `ulp` and `order`, which keep the initial draw and
  // are subject to the spread guard above.
  bool replicas_redraw = true;
  // Spread guard: min(D_AA, D_BB) must reach this x D_AB (in [0, 1]).
  double min_spread_ratio = 0.5;
};

// One profile's replicas. Views only: the caller owns the data, which must
// outlive the call.
struct ProfileReplicas {
  std::span<const double> accuracy;      // K test accuracies in [0, 1]
  std::span<const uint8_t> loss_finite;  // K flags, 1 = every loss finite;
                                         // empty = all finite
  std::span<const uint8_t> predictions;  // empty, or K x n argmax predictions,
                                         // replica-major (row r = replica r)
};

// The test set the accuracies were measured on.
struct TestSetInfo {
  int num_classes = 0;                // k >= 2
  int64_t num_examples = 0;           // n >= 1
  std::span<const uint8_t> labels;    // empty, or n labels (needed with
                                      // predictions, for the floor)
};

enum class Verdict {
  kSignificant,
  kCollapseDriven,
  kWithinNoise,
  kInsufficient,
};
// "significant", "collapse_driven", "within_noise", "insufficient".
const char* VerdictName(Verdict v);
Result<Verdict> ParseVerdict(std::string_view name);

struct ProfileSummary {
  int k = 0;               // replicas
  double mean = 0;         // mean test accuracy
  double sd = 0;           // sample sd (ddof 1)
  int collapses = 0;       // replicas flagged by IsCollapsed
  double floor = 0;        // Jordan floor f of one run's accuracy sd
  double sigma2_s = 0;     // distribution-wise variance (NaN without
                           // predictions or with fewer than 2 replicas)
};

struct PairStatistics {
  ProfileSummary a, b;
  double mean_diff = 0;            // Δ = ā - b̄
  double permutation_p = 1;        // two-sided, all replicas
  bool permutation_exact = true;   // false: Monte Carlo
  uint64_t permutation_splits = 0; // splits enumerated or drawn
  double welch_t = 0, welch_df = 0, welch_p = 1;
  double ci_low = 0, ci_high = 0;  // Welch CI of Δ at `confidence`
  double hedges_g = 0;
  double prob_a_greater = 0.5;     // P(A>B), ties count 1/2
  double fisher_p = 1;             // collapse counts
  bool survivors_tested = false;   // >= min_survivors non-collapsed a side
  double survivors_diff = 0;       // Δ over survivors (NaN if not tested)
  double survivors_p = 1;          // their two-sided permutation p (NaN if not)
  double survivors_prob_a_greater = 0.5;
  bool has_predictions = false;    // churn fields are NaN without predictions
  double churn_aa = 0, churn_bb = 0, churn_ab = 0;
  double excess_churn = 0, excess_churn_p = 1;
  double floor = 0;                // pair floor sqrt((f_A^2 + f_B^2)/2)
  bool floor_from_predictions = false;
  double se2 = 0;                  // SE^2 floored (the GP's noise variance)
  double lcb = 0;                  // significant_diff objective
  Verdict verdict = Verdict::kInsufficient;
  // Why the verdict is insufficient when the spread guard set it ("" when
  // the guard did not apply), e.g. "ulp/order replicas did not spread:
  // profile A's accuracies are all equal".
  std::string verdict_reason;
};

// All statistics and the verdict of profile A against profile B. Fails with
// InvalidArgument (message names the field) on K < opt.min_replicas or
// K > 32 (the permutation tests pool at most 64 replicas), an
// accuracy outside [0, 1] or non-finite, loss_finite or predictions of the
// wrong length, predictions without labels, a label or prediction >= k, k < 2
// or n < 1, or an option out of range (alpha and confidence in (0, 1),
// min_replicas >= 4, min_survivors >= 2, ...). Both sides need predictions,
// or neither.
Result<PairStatistics> ComparePair(const ProfileReplicas& a,
                                   const ProfileReplicas& b,
                                   const TestSetInfo& test,
                                   const SignificanceOptions& opt = {});

// ---- The individual statistics (each the single definition of its formula).

// The collapse rule above for one replica: !loss_finite || AtChance(...).
bool IsCollapsed(double accuracy, bool loss_finite, int num_classes,
                 int64_t num_examples, double se_multiple = 3.0);

// Degenerate models (one definition for replicas, trials, queries and the
// search; docs/analysis.md "Degenerate models"):
//   at chance   accuracy <= 1/k + m sqrt((1/k)(1 - 1/k)/n), m = se_multiple:
//               within m binomial standard errors of a chance-level
//               classifier on n test examples (or below chance). A
//               non-finite accuracy counts as at chance.
//   exploding   a loss that is non-finite or above
//               kExplodingLossMultiple x ln(k): ln(k) is the cross-entropy of
//               the uniform prediction, so such a loss puts on average less
//               than k^-10 on the true class: numerically broken, not merely
//               untrained.
// AtChance needs k >= 2 and n >= 1 (else false); LossExploded needs k >= 2
// (else false) and treats NaN and +-inf alike.
inline constexpr double kExplodingLossMultiple = 10.0;
double ChanceThreshold(int num_classes, int64_t num_examples,
                       double se_multiple = 3.0);
bool AtChance(double accuracy, int num_classes, int64_t num_examples,
              double se_multiple = 3.0);
bool LossExploded(double loss, int num_classes,
                  double multiple = kExplodingLossMultiple);

struct PermutationResult {
  double p = 1;         // two-sided (difference of means) or one-sided (churn)
  bool exact = true;
  uint64_t splits = 0;  // enumerated or drawn
};
// Two-sided permutation p of mean(a) - mean(b). Needs both non-empty and
// a.size() + b.size() <= 64.
Result<PermutationResult> PermutationTest(std::span<const double> a,
                                          std::span<const double> b,
                                          const SignificanceOptions& opt = {});

struct WelchResult {
  double t = 0, df = 0, p = 1, se2 = 0, ci_low = 0, ci_high = 0;
};
// Needs >= 2 values a side.
Result<WelchResult> WelchTest(std::span<const double> a,
                              std::span<const double> b,
                              double confidence = 0.95);

// Needs >= 2 values a side.
Result<double> HedgesG(std::span<const double> a, std::span<const double> b);
double ProbabilityOfSuperiority(std::span<const double> a,
                                std::span<const double> b);
// Two-sided p of [[a, b], [c, d]]; counts >= 0.
Result<double> FisherExact(int64_t a, int64_t b, int64_t c, int64_t d);

// t quantile F_t,ν^-1(q) (Boost.Math), e.g. q = 0.975.
double StudentQuantile(double df, double q);
// max(0, |diff| - StudentQuantile(df, (1 + confidence)/2) sqrt(se2)).
double LowerConfidenceBound(double diff, double se2, double df,
                            double confidence = 0.95);

// Jordan floor of one profile from its replicas' predictions (K x n,
// replica-major) and the labels: sqrt(Σ_i e_i (1 - e_i)) / n over the rows
// whose use[r] is 1 (empty use: every row). sigma2_s (may be null) receives
// the distribution-wise variance of those rows' accuracies.
Result<double> JordanFloor(std::span<const uint8_t> predictions,
                           std::span<const uint8_t> labels, int64_t replicas,
                           std::span<const uint8_t> use, double* sigma2_s);

struct ChurnResult {
  double d_aa = 0, d_bb = 0, d_ab = 0, excess = 0, p = 1;
  bool exact = true;
  uint64_t splits = 0;
};
// Excess churn of A (K_A x n predictions) against B (K_B x n), and its
// one-sided permutation p. Needs >= 2 replicas a side.
Result<ChurnResult> ExcessChurn(std::span<const uint8_t> a, int64_t k_a,
                                std::span<const uint8_t> b, int64_t k_b,
                                int64_t num_examples,
                                const SignificanceOptions& opt = {});

struct BhResult {
  std::vector<double> adjusted;  // same order as the input
  std::vector<uint8_t> reject;   // 1 where adjusted <= q
};
// Benjamini-Hochberg over a search's p-values (each in [0, 1]) at level q
// (default 0.10). An empty input gives empty results.
Result<BhResult> BenjaminiHochberg(std::span<const double> p, double q = 0.10);

}  // namespace xw::stats

#endif  // XWIRES_CORE_SIGNIFICANCE_H_
