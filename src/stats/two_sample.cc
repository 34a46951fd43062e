// Two-sample statistics of significance.h: the permutation test on the
// difference of means, Welch's t, Hedges' g, P(A>B), Fisher's exact test and
// the Student-t quantities of the LCB. Formulas: the header's comment.
#include <algorithm>
#include <boost/math/distributions/hypergeometric.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "src/stats/splits.h"
#include "xwires/core/significance.h"

namespace xw::stats {
namespace {

// Domain and overflow errors give NaN / inf instead of throwing: library code
// never throws, and inputs are checked before they reach Boost.
using NoThrowPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<
        boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>>;
using StudentT = boost::math::students_t_distribution<double, NoThrowPolicy>;
using Hypergeometric =
    boost::math::hypergeometric_distribution<double, NoThrowPolicy>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double Mean(std::span<const double> x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

// Sample variance (ddof 1); 0 for fewer than 2 values.
double Variance(std::span<const double> x) {
  if (x.size() < 2) return 0;
  const double m = Mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return s / static_cast<double>(x.size() - 1);
}

Status NeedAtLeast(std::span<const double> a, std::span<const double> b,
                   size_t n, const char* what) {
  if (a.size() < n || b.size() < n) {
    return Status::InvalidArgument(std::string(what) + " needs at least " +
                                   std::to_string(n) + " values a side, got " +
                                   std::to_string(a.size()) + " and " +
                                   std::to_string(b.size()));
  }
  return Status::OK();
}

}  // namespace

double ChanceThreshold(int num_classes, int64_t num_examples,
                       double se_multiple) {
  const double chance = 1.0 / num_classes;
  const double se =
      std::sqrt(chance * (1 - chance) / static_cast<double>(num_examples));
  return chance + se_multiple * se;
}

bool AtChance(double accuracy, int num_classes, int64_t num_examples,
              double se_multiple) {
  if (num_classes < 2 || num_examples < 1) return false;
  if (!std::isfinite(accuracy)) return true;
  return accuracy <= ChanceThreshold(num_classes, num_examples, se_multiple);
}

bool LossExploded(double loss, int num_classes, double multiple) {
  if (num_classes < 2) return false;
  return !std::isfinite(loss) || loss > multiple * std::log(num_classes);
}

bool IsCollapsed(double accuracy, bool loss_finite, int num_classes,
                 int64_t num_examples, double se_multiple) {
  if (!loss_finite || !std::isfinite(accuracy)) return true;
  return AtChance(accuracy, num_classes, num_examples, se_multiple);
}

Result<PermutationResult> PermutationTest(std::span<const double> a,
                                          std::span<const double> b,
                                          const SignificanceOptions& opt) {
  XW_RETURN_IF_ERROR(NeedAtLeast(a, b, 1, "the permutation test"));
  const int n_a = static_cast<int>(a.size());
  const int n = n_a + static_cast<int>(b.size());
  if (n > 64) {
    return Status::InvalidArgument(
        "the permutation test takes at most 64 "
        "replicas in all, got " +
        std::to_string(n));
  }
  double pooled[64];
  std::copy(a.begin(), a.end(), pooled);
  std::copy(b.begin(), b.end(), pooled + n_a);
  double total = 0;
  for (int i = 0; i < n; ++i) total += pooled[i];
  // The statistic of a split, summed in index order so that the identity
  // split reproduces the observed value bit for bit.
  auto stat = [&](uint64_t mask) {
    double s = 0;
    for (int i = 0; i < n; ++i) {
      if (mask >> i & 1) s += pooled[i];
    }
    return s / n_a - (total - s) / (n - n_a);
  };
  const double observed = stat((uint64_t{1} << n_a) - 1);
  const double gamma =
      std::abs(observed) * 100 * std::numeric_limits<double>::epsilon();
  uint64_t ge = 0, le = 0;
  const internal::SplitPlan plan = internal::ForEachSplit(
      n, n_a, opt.max_exact_splits, opt.monte_carlo_resamples, opt.seed,
      "stats/permutation", [&](uint64_t mask) {
        const double t = stat(mask);
        ge += t >= observed - gamma;
        le += t <= observed + gamma;
      });
  const double extra = plan.exact ? 0 : 1;  // the observed split, for MC
  const double denom = static_cast<double>(plan.count) + extra;
  const double p_ge = (static_cast<double>(ge) + extra) / denom;
  const double p_le = (static_cast<double>(le) + extra) / denom;
  PermutationResult r;
  r.p = std::min(1.0, 2 * std::min(p_ge, p_le));
  r.exact = plan.exact;
  r.splits = plan.count;
  return r;
}

double StudentQuantile(double df, double q) {
  if (!(df > 0) || !(q > 0 && q < 1)) return kNaN;
  return boost::math::quantile(StudentT(df), q);
}

double LowerConfidenceBound(double diff, double se2, double df,
                            double confidence) {
  const double t = StudentQuantile(df, (1 + confidence) / 2);
  return std::max(0.0, std::abs(diff) - t * std::sqrt(se2));
}

Result<WelchResult> WelchTest(std::span<const double> a,
                              std::span<const double> b, double confidence) {
  XW_RETURN_IF_ERROR(NeedAtLeast(a, b, 2, "Welch's test"));
  const double ka = static_cast<double>(a.size());
  const double kb = static_cast<double>(b.size());
  const double va = Variance(a) / ka, vb = Variance(b) / kb;
  const double diff = Mean(a) - Mean(b);
  WelchResult r;
  r.se2 = va + vb;
  if (r.se2 > 0) {
    r.df = r.se2 * r.se2 / (va * va / (ka - 1) + vb * vb / (kb - 1));
    r.t = diff / std::sqrt(r.se2);
    r.p = 2 * boost::math::cdf(
                  boost::math::complement(StudentT(r.df), std::abs(r.t)));
  } else {
    r.df = ka + kb - 2;
    r.t = diff == 0 ? kNaN : std::copysign(kInf, diff);
    r.p = diff == 0 ? 1.0 : 0.0;
  }
  const double half =
      StudentQuantile(r.df, (1 + confidence) / 2) * std::sqrt(r.se2);
  r.ci_low = diff - half;
  r.ci_high = diff + half;
  return r;
}

Result<double> HedgesG(std::span<const double> a, std::span<const double> b) {
  XW_RETURN_IF_ERROR(NeedAtLeast(a, b, 2, "Hedges' g"));
  const double ka = static_cast<double>(a.size());
  const double kb = static_cast<double>(b.size());
  const double m = ka + kb - 2;
  const double pooled = ((ka - 1) * Variance(a) + (kb - 1) * Variance(b)) / m;
  const double diff = Mean(a) - Mean(b);
  if (diff == 0) return 0.0;
  if (pooled == 0) return std::copysign(kInf, diff);
  // J(m) = Γ(m/2) / (sqrt(m/2) Γ((m-1)/2)); tgamma_delta_ratio(x, d) is
  // Γ(x) / Γ(x + d).
  const double j = 1.0 / (boost::math::tgamma_delta_ratio((m - 1) / 2, 0.5) *
                          std::sqrt(m / 2));
  return j * diff / std::sqrt(pooled);
}

double ProbabilityOfSuperiority(std::span<const double> a,
                                std::span<const double> b) {
  if (a.empty() || b.empty()) return kNaN;
  double wins = 0;
  for (double x : a) {
    for (double y : b) wins += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  }
  return wins / (static_cast<double>(a.size()) * static_cast<double>(b.size()));
}

Result<double> FisherExact(int64_t a, int64_t b, int64_t c, int64_t d) {
  if (a < 0 || b < 0 || c < 0 || d < 0) {
    return Status::InvalidArgument("Fisher's exact test needs counts >= 0");
  }
  const int64_t total = a + b + c + d;
  const int64_t row = a + b, col = a + c;
  if (row == 0 || col == 0 || row == total || col == total) return 1.0;
  const Hypergeometric h(static_cast<unsigned>(col), static_cast<unsigned>(row),
                         static_cast<unsigned>(total));
  const double observed = boost::math::pdf(h, static_cast<unsigned>(a));
  const double cut = observed * (1 + 1e-7);
  double p = 0;
  const int64_t lo = std::max<int64_t>(0, row + col - total);
  const int64_t hi = std::min(row, col);
  for (int64_t x = lo; x <= hi; ++x) {
    const double px = boost::math::pdf(h, static_cast<unsigned>(x));
    if (px <= cut) p += px;
  }
  return std::min(1.0, p);
}

}  // namespace xw::stats
