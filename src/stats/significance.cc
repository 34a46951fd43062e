// ComparePair: every statistic of one profile pair and its verdict
// (significance.h). The individual formulas live in two_sample.cc, churn.cc
// and fdr.cc; this file validates the input, decides which replicas each
// statistic sees, and applies the verdict rules.
#include "xwires/core/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace xw::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Status CheckSide(const ProfileReplicas& side, const char* name,
                 const TestSetInfo& test, const SignificanceOptions& opt) {
  const std::string who = std::string("profile ") + name;
  const size_t k = side.accuracy.size();
  if (static_cast<int>(k) < opt.min_replicas) {
    return Status::InvalidArgument(
        who + " has " + std::to_string(k) + " replicas; at least " +
        std::to_string(opt.min_replicas) +
        " are needed: below 4 a side an exact permutation test cannot reach "
        "p < 0.05 (with 3 + 3 the smallest two-sided p is 2/20 = 0.1)");
  }
  if (k > 32) {
    return Status::InvalidArgument(
        who + " has " + std::to_string(k) +
        " replicas; at most 32 a side are supported");
  }
  for (size_t r = 0; r < k; ++r) {
    const double acc = side.accuracy[r];
    if (!(acc >= 0 && acc <= 1)) {
      return Status::InvalidArgument(who + " replica " + std::to_string(r) +
                                     ": accuracy " + std::to_string(acc) +
                                     " is not in [0, 1]");
    }
  }
  if (!side.loss_finite.empty() && side.loss_finite.size() != k) {
    return Status::InvalidArgument(
        who + ": " + std::to_string(side.loss_finite.size()) +
        " loss-finite flags for " + std::to_string(k) + " replicas");
  }
  if (!side.predictions.empty()) {
    if (side.predictions.size() != k * static_cast<size_t>(test.num_examples)) {
      return Status::InvalidArgument(
          who + ": " + std::to_string(side.predictions.size()) +
          " predictions, expected " + std::to_string(k) + " replicas x " +
          std::to_string(test.num_examples) + " examples");
    }
    for (size_t i = 0; i < side.predictions.size(); ++i) {
      if (side.predictions[i] >= test.num_classes) {
        return Status::InvalidArgument(
            who + " replica " + std::to_string(i / test.num_examples) +
            " predicts class " + std::to_string(side.predictions[i]) +
            " of a " + std::to_string(test.num_classes) + "-class test set");
      }
    }
  }
  return Status::OK();
}

Status CheckOptions(const SignificanceOptions& o) {
  auto bad = [](const char* field, double v, const char* want) {
    return Status::InvalidArgument(std::string("significance option ") + field +
                                   " = " + std::to_string(v) + ": " + want);
  };
  if (!(o.alpha > 0 && o.alpha < 1))
    return bad("alpha", o.alpha, "must lie in (0, 1)");
  if (!(o.superiority_low >= 0 && o.superiority_low <= o.superiority_high &&
        o.superiority_high <= 1)) {
    return bad("superiority_low", o.superiority_low,
               "needs 0 <= superiority_low <= superiority_high <= 1");
  }
  if (!(o.floor_multiple >= 0))
    return bad("floor_multiple", o.floor_multiple, "must be >= 0");
  if (!(o.collapse_se_multiple >= 0)) {
    return bad("collapse_se_multiple", o.collapse_se_multiple, "must be >= 0");
  }
  if (o.min_replicas < 4) {
    return bad("min_replicas", o.min_replicas,
               "must be >= 4 (an exact test cannot reach p < 0.05 below 4)");
  }
  if (o.min_survivors < 2)
    return bad("min_survivors", o.min_survivors, "must be >= 2");
  if (!(o.confidence > 0 && o.confidence < 1)) {
    return bad("confidence", o.confidence, "must lie in (0, 1)");
  }
  if (!(o.min_spread_ratio >= 0 && o.min_spread_ratio <= 1)) {
    return bad("min_spread_ratio", o.min_spread_ratio, "must lie in [0, 1]");
  }
  if (o.monte_carlo_resamples < 1) {
    return bad("monte_carlo_resamples", o.monte_carlo_resamples,
               "must be >= 1");
  }
  return Status::OK();
}

Status CheckTestSet(const TestSetInfo& test) {
  if (test.num_classes < 2 || test.num_classes > 256) {
    return Status::InvalidArgument("the test set needs 2 to 256 classes, got " +
                                   std::to_string(test.num_classes));
  }
  if (test.num_examples < 1) {
    return Status::InvalidArgument("the test set has no examples");
  }
  if (!test.labels.empty()) {
    if (static_cast<int64_t>(test.labels.size()) != test.num_examples) {
      return Status::InvalidArgument(
          "the test set has " + std::to_string(test.labels.size()) +
          " labels for " + std::to_string(test.num_examples) + " examples");
    }
    for (size_t i = 0; i < test.labels.size(); ++i) {
      if (test.labels[i] >= test.num_classes) {
        return Status::InvalidArgument("test label " + std::to_string(i) +
                                       " is " + std::to_string(test.labels[i]) +
                                       ", not below the class count " +
                                       std::to_string(test.num_classes));
      }
    }
  }
  return Status::OK();
}

// Mean, sd and collapse flags of one side; `alive` marks the survivors.
ProfileSummary Summarize(const ProfileReplicas& side, const TestSetInfo& test,
                         const SignificanceOptions& opt,
                         std::vector<uint8_t>* alive) {
  ProfileSummary s;
  s.k = static_cast<int>(side.accuracy.size());
  double sum = 0;
  for (double a : side.accuracy) sum += a;
  s.mean = sum / s.k;
  double ss = 0;
  for (double a : side.accuracy) ss += (a - s.mean) * (a - s.mean);
  s.sd = s.k > 1 ? std::sqrt(ss / (s.k - 1)) : 0;
  alive->assign(s.k, 1);
  for (int r = 0; r < s.k; ++r) {
    const bool finite = side.loss_finite.empty() || side.loss_finite[r] != 0;
    if (IsCollapsed(side.accuracy[r], finite, test.num_classes,
                    test.num_examples, opt.collapse_se_multiple)) {
      (*alive)[r] = 0;
      ++s.collapses;
    }
  }
  return s;
}

std::vector<double> Select(std::span<const double> x,
                           const std::vector<uint8_t>& keep) {
  std::vector<double> out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (keep[i]) out.push_back(x[i]);
  }
  return out;
}

// Floor of one side: survivors' predictions (every replica if none
// survived), or Jordan's k-class approximation without predictions.
Status SideFloor(const ProfileReplicas& side, const TestSetInfo& test,
                 const std::vector<uint8_t>& alive, ProfileSummary* s) {
  std::vector<uint8_t> use = alive;
  if (s->collapses == s->k) use.assign(s->k, 1);
  if (!side.predictions.empty()) {
    XW_ASSIGN_OR_RETURN(s->floor, JordanFloor(side.predictions, test.labels,
                                              s->k, use, &s->sigma2_s));
    return Status::OK();
  }
  const std::vector<double> acc = Select(side.accuracy, use);
  double mean = 0;
  for (double a : acc) mean += a;
  mean /= static_cast<double>(acc.size());
  const double err = 1 - mean;
  s->floor = std::sqrt(
      err / (static_cast<double>(test.num_examples) * test.num_classes));
  s->sigma2_s = kNaN;
  return Status::OK();
}

bool Passes(double p, double prob_a_greater, double diff, double floor,
            const SignificanceOptions& opt) {
  return p < opt.alpha &&
         (prob_a_greater < opt.superiority_low ||
          prob_a_greater > opt.superiority_high) &&
         std::abs(diff) >= opt.floor_multiple * floor;
}

Verdict Decide(const PairStatistics& st, const SignificanceOptions& opt) {
  const bool all_pass =
      Passes(st.permutation_p, st.prob_a_greater, st.mean_diff, st.floor, opt);
  if (st.a.collapses + st.b.collapses == 0) {
    return all_pass ? Verdict::kSignificant : Verdict::kWithinNoise;
  }
  if (st.survivors_tested && Passes(st.survivors_p, st.survivors_prob_a_greater,
                                    st.survivors_diff, st.floor, opt)) {
    return Verdict::kSignificant;
  }
  if (st.fisher_p < opt.alpha || all_pass) return Verdict::kCollapseDriven;
  return st.survivors_tested ? Verdict::kWithinNoise : Verdict::kInsufficient;
}

// The spread guard (significance.h): "" when the replicas spread (or the
// family redraws), else the reason the verdict is insufficient.
std::string Short(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

// Equal accuracies are tested as such, not as s == 0: the mean of K equal
// doubles need not round back to them, leaving s at 1e-17.
std::string SpreadGuard(const ProfileReplicas& a, const ProfileReplicas& b,
                        const PairStatistics& st,
                        const SignificanceOptions& opt) {
  if (opt.replicas_redraw) return "";
  const std::string head = "ulp/order replicas did not spread: ";
  for (const auto& [side, name] :
       {std::pair{&a, "A"}, std::pair{&b, "B"}}) {
    const std::span<const double> acc = side->accuracy;
    if (std::all_of(acc.begin(), acc.end(),
                    [&](double x) { return x == acc[0]; })) {
      return head + "profile " + name +
             "'s replica accuracies are all equal, so they do not measure the "
             "draw-to-draw noise (use the seed family)";
    }
  }
  if (st.has_predictions) {
    const double within = std::min(st.churn_aa, st.churn_bb);
    if (within < opt.min_spread_ratio * st.churn_ab) {
      return head + "within-profile churn " + Short(within) + " is below " +
             Short(opt.min_spread_ratio) + " x the cross-profile churn " +
             Short(st.churn_ab) +
             " (use the seed family)";
    }
  }
  return "";
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kSignificant:
      return "significant";
    case Verdict::kCollapseDriven:
      return "collapse_driven";
    case Verdict::kWithinNoise:
      return "within_noise";
    case Verdict::kInsufficient:
      return "insufficient";
  }
  return "insufficient";
}

Result<Verdict> ParseVerdict(std::string_view name) {
  for (Verdict v : {Verdict::kSignificant, Verdict::kCollapseDriven,
                    Verdict::kWithinNoise, Verdict::kInsufficient}) {
    if (name == VerdictName(v)) return v;
  }
  return Status::InvalidArgument("unknown verdict '" + std::string(name) +
                                 "' (expected significant, collapse_driven, "
                                 "within_noise or insufficient)");
}

Result<PairStatistics> ComparePair(const ProfileReplicas& a,
                                   const ProfileReplicas& b,
                                   const TestSetInfo& test,
                                   const SignificanceOptions& opt) {
  XW_RETURN_IF_ERROR(CheckOptions(opt));
  XW_RETURN_IF_ERROR(CheckTestSet(test));
  XW_RETURN_IF_ERROR(CheckSide(a, "A", test, opt));
  XW_RETURN_IF_ERROR(CheckSide(b, "B", test, opt));
  const bool with_pred = !a.predictions.empty();
  if (with_pred != !b.predictions.empty()) {
    return Status::InvalidArgument(
        "per-example predictions are given for one profile only; give both or "
        "neither");
  }
  if (with_pred && test.labels.empty()) {
    return Status::InvalidArgument(
        "per-example predictions need the test set's labels");
  }
  PairStatistics st;
  std::vector<uint8_t> alive_a, alive_b;
  st.a = Summarize(a, test, opt, &alive_a);
  st.b = Summarize(b, test, opt, &alive_b);
  st.mean_diff = st.a.mean - st.b.mean;

  XW_ASSIGN_OR_RETURN(PermutationResult perm,
                      PermutationTest(a.accuracy, b.accuracy, opt));
  st.permutation_p = perm.p;
  st.permutation_exact = perm.exact;
  st.permutation_splits = perm.splits;
  XW_ASSIGN_OR_RETURN(WelchResult welch,
                      WelchTest(a.accuracy, b.accuracy, opt.confidence));
  st.welch_t = welch.t;
  st.welch_df = welch.df;
  st.welch_p = welch.p;
  st.ci_low = welch.ci_low;
  st.ci_high = welch.ci_high;
  XW_ASSIGN_OR_RETURN(st.hedges_g, HedgesG(a.accuracy, b.accuracy));
  st.prob_a_greater = ProbabilityOfSuperiority(a.accuracy, b.accuracy);
  XW_ASSIGN_OR_RETURN(st.fisher_p,
                      FisherExact(st.a.collapses, st.a.k - st.a.collapses,
                                  st.b.collapses, st.b.k - st.b.collapses));

  const std::vector<double> surv_a = Select(a.accuracy, alive_a);
  const std::vector<double> surv_b = Select(b.accuracy, alive_b);
  st.survivors_tested = static_cast<int>(surv_a.size()) >= opt.min_survivors &&
                        static_cast<int>(surv_b.size()) >= opt.min_survivors;
  if (st.survivors_tested) {
    XW_ASSIGN_OR_RETURN(PermutationResult sp,
                        PermutationTest(surv_a, surv_b, opt));
    double ma = 0, mb = 0;
    for (double x : surv_a) ma += x;
    for (double x : surv_b) mb += x;
    st.survivors_diff = ma / surv_a.size() - mb / surv_b.size();
    st.survivors_p = sp.p;
    st.survivors_prob_a_greater = ProbabilityOfSuperiority(surv_a, surv_b);
  } else {
    st.survivors_diff = st.survivors_p = st.survivors_prob_a_greater = kNaN;
  }

  XW_RETURN_IF_ERROR(SideFloor(a, test, alive_a, &st.a));
  XW_RETURN_IF_ERROR(SideFloor(b, test, alive_b, &st.b));
  st.floor = std::sqrt((st.a.floor * st.a.floor + st.b.floor * st.b.floor) / 2);
  st.floor_from_predictions = with_pred;
  st.has_predictions = with_pred;
  if (with_pred) {
    XW_ASSIGN_OR_RETURN(ChurnResult churn,
                        ExcessChurn(a.predictions, st.a.k, b.predictions,
                                    st.b.k, test.num_examples, opt));
    st.churn_aa = churn.d_aa;
    st.churn_bb = churn.d_bb;
    st.churn_ab = churn.d_ab;
    st.excess_churn = churn.excess;
    st.excess_churn_p = churn.p;
  } else {
    st.churn_aa = st.churn_bb = st.churn_ab = kNaN;
    st.excess_churn = st.excess_churn_p = kNaN;
  }

  const double floor_se2 =
      st.a.floor * st.a.floor / st.a.k + st.b.floor * st.b.floor / st.b.k;
  st.se2 = std::max(welch.se2, floor_se2);
  st.lcb =
      LowerConfidenceBound(st.mean_diff, st.se2, st.welch_df, opt.confidence);
  st.verdict = Decide(st, opt);
  st.verdict_reason = SpreadGuard(a, b, st, opt);
  if (!st.verdict_reason.empty()) st.verdict = Verdict::kInsufficient;
  return st;
}

}  // namespace xw::stats
