// Prediction-level statistics of significance.h: Jordan's a-priori floor of
// the test-set noise (with the distribution-wise variance) and the excess
// churn of two profiles with its permutation p. Formulas: the header.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "src/stats/splits.h"
#include "xwires/core/significance.h"

namespace xw::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Number of examples on which rows i and j of `pred` (n per row) differ.
int64_t Disagreements(const uint8_t* row_i, const uint8_t* row_j, int64_t n) {
  int64_t d = 0;
  for (int64_t e = 0; e < n; ++e) d += row_i[e] != row_j[e];
  return d;
}

}  // namespace

Result<double> JordanFloor(std::span<const uint8_t> predictions,
                           std::span<const uint8_t> labels, int64_t replicas,
                           std::span<const uint8_t> use, double* sigma2_s) {
  const int64_t n = static_cast<int64_t>(labels.size());
  if (n < 1 || replicas < 1 ||
      static_cast<int64_t>(predictions.size()) != replicas * n) {
    return Status::InvalidArgument(
        "the floor needs " + std::to_string(replicas) + " x " +
        std::to_string(n) + " predictions, got " +
        std::to_string(predictions.size()));
  }
  if (!use.empty() && static_cast<int64_t>(use.size()) != replicas) {
    return Status::InvalidArgument("the floor's row selection has " +
                                   std::to_string(use.size()) +
                                   " entries for " + std::to_string(replicas) +
                                   " replicas");
  }
  std::vector<int64_t> wrong(n, 0);     // per example, over used rows
  std::vector<double> accuracy;         // per used row
  for (int64_t r = 0; r < replicas; ++r) {
    if (!use.empty() && !use[r]) continue;
    const uint8_t* row = predictions.data() + r * n;
    int64_t errors = 0;
    for (int64_t e = 0; e < n; ++e) {
      const bool miss = row[e] != labels[e];
      wrong[e] += miss;
      errors += miss;
    }
    accuracy.push_back(1.0 - static_cast<double>(errors) / n);
  }
  const double k = static_cast<double>(accuracy.size());
  if (k == 0) return Status::InvalidArgument("the floor's row selection is empty");
  double bernoulli = 0;  // Σ_i e_i (1 - e_i)
  for (int64_t e = 0; e < n; ++e) {
    const double rate = wrong[e] / k;
    bernoulli += rate * (1 - rate);
  }
  if (sigma2_s != nullptr) {
    if (k < 2 || n < 2) {
      *sigma2_s = kNaN;
    } else {
      double mean = 0;
      for (double a : accuracy) mean += a;
      mean /= k;
      double var = 0;
      for (double a : accuracy) var += (a - mean) * (a - mean);
      var /= k - 1;
      // Σ_i v_i with v_i = k/(k-1) e_i (1 - e_i), the ddof-1 variance of a
      // 0/1 column.
      const double sum_v = bernoulli * k / (k - 1);
      const double nd = static_cast<double>(n);
      *sigma2_s = nd / (nd - 1) * (var - sum_v / (nd * nd));
    }
  }
  return std::sqrt(bernoulli) / static_cast<double>(n);
}

Result<ChurnResult> ExcessChurn(std::span<const uint8_t> a, int64_t k_a,
                                std::span<const uint8_t> b, int64_t k_b,
                                int64_t num_examples,
                                const SignificanceOptions& opt) {
  const int64_t n = num_examples;
  if (k_a < 2 || k_b < 2 || k_a + k_b > 64) {
    return Status::InvalidArgument(
        "excess churn needs 2 to 62 replicas a side (64 in all), got " +
        std::to_string(k_a) + " and " + std::to_string(k_b));
  }
  if (n < 1 || static_cast<int64_t>(a.size()) != k_a * n ||
      static_cast<int64_t>(b.size()) != k_b * n) {
    return Status::InvalidArgument(
        "excess churn needs K x " + std::to_string(n) +
        " predictions a side, got " + std::to_string(a.size()) + " and " +
        std::to_string(b.size()));
  }
  const int total = static_cast<int>(k_a + k_b);
  auto row = [&](int i) {
    return i < k_a ? a.data() + i * n : b.data() + (i - k_a) * n;
  };
  // Pairwise disagreement counts of the pooled replicas, computed once.
  std::vector<int64_t> d(static_cast<size_t>(total) * total, 0);
  for (int i = 0; i < total; ++i) {
    for (int j = i + 1; j < total; ++j) {
      d[i * total + j] = d[j * total + i] = Disagreements(row(i), row(j), n);
    }
  }
  const int ka = static_cast<int>(k_a), kb = static_cast<int>(k_b);
  const double nd = static_cast<double>(n);
  auto churn = [&](uint64_t mask, double* aa, double* bb, double* ab) {
    int64_t s_aa = 0, s_bb = 0, s_ab = 0;  // integer sums: order-free
    for (int i = 0; i < total; ++i) {
      const bool in_i = mask >> i & 1;
      for (int j = i + 1; j < total; ++j) {
        const bool in_j = mask >> j & 1;
        const int64_t v = d[i * total + j];
        if (in_i && in_j) s_aa += v;
        else if (!in_i && !in_j) s_bb += v;
        else s_ab += v;
      }
    }
    *aa = s_aa / (nd * ka * (ka - 1) / 2);
    *bb = s_bb / (nd * kb * (kb - 1) / 2);
    *ab = s_ab / (nd * ka * kb);
    return *ab - (*aa + *bb) / 2;
  };
  ChurnResult r;
  r.excess = churn((uint64_t{1} << ka) - 1, &r.d_aa, &r.d_bb, &r.d_ab);
  const double gamma =
      std::abs(r.excess) * 100 * std::numeric_limits<double>::epsilon();
  uint64_t ge = 0;
  const internal::SplitPlan plan = internal::ForEachSplit(
      total, ka, opt.max_exact_splits, opt.monte_carlo_resamples, opt.seed,
      "stats/churn", [&](uint64_t mask) {
        double aa, bb, ab;
        ge += churn(mask, &aa, &bb, &ab) >= r.excess - gamma;
      });
  const double extra = plan.exact ? 0 : 1;
  r.p = (static_cast<double>(ge) + extra) /
        (static_cast<double>(plan.count) + extra);
  r.exact = plan.exact;
  r.splits = plan.count;
  return r;
}

}  // namespace xw::stats
