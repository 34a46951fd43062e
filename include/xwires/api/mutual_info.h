// Mutual information estimators used by `xwires mi` and the HTML report.
//
// Binned (the CrossedWires study's procedure): each variable is min-max
// normalised to [0, 1] and digitized into ten 0.1-wide bins exactly as
// numpy.digitize(v, numpy.arange(0, 1, 0.1)) - 1 does (edges k*0.1 computed
// in double, 1.0 falls in the last bin); the plug-in estimate
//   I(X;Y) = sum_xy p(x,y) ln(p(x,y) / (p(x) p(y)))
// in nats, as sklearn.metrics.mutual_info_score. A pair of variables is one
// joint variable (bin_a * 10 + bin_b).
//
// KSG (Kraskov, Stoegbauer, Grassberger 2004, estimator 1, as
// sklearn.feature_selection.mutual_info_regression): max-norm distance eps_i
// to the k-th neighbour in the joint space, n_x(i) and n_y(i) the points
// strictly closer than eps_i in each marginal space,
//   I = psi(k) + psi(N) - mean_i(psi(n_x(i) + 1) + psi(n_y(i) + 1)),
// clamped at 0. Brute force O(N^2 d); fine for thousands of points.
//
// Jitter: both estimators are repeated `repeats` times with uniform noise in
// [-jitter, +jitter] added to the normalised values (Philox stream
// "analysis/mi/jitter", so results are a pure function of the inputs and the
// seed), giving a mean and a sample standard deviation. Ties at bin edges and
// the duplicate points KSG cannot handle are what the jitter is for.
//
// How sure an estimate is. A plug-in estimate is biased upwards: with Bx x
// By occupied bins and n samples the bias under independence is about
// (Bx - 1)(By - 1) / (2n) nats (0.86 nats for 10 x 10 bins at n = 47), larger
// than most real effects on small searches. So every estimate comes with a
// permutation null: the same estimator on `shuffles` random permutations of
// the divergences (Philox stream "analysis/mi/null", the option seed), which
// keeps both marginals and destroys any dependence. Reported beside the mean:
// the null's mean (the bias at this n, these bins and these marginals), the
// bias-corrected estimate mean - null mean (negative: no detectable
// information), and the permutation p-value (1 + #{null >= mean}) /
// (1 + shuffles). A binned estimate also says whether n is too small for its
// bins: fewer than kMiSamplesPerCell samples per joint cell.
//
// All functions are pure and thread-safe.
#ifndef XWIRES_API_MUTUAL_INFO_H_
#define XWIRES_API_MUTUAL_INFO_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

inline constexpr int kMiBins = 10;
// Below this many samples per joint bin (10^(variables + 1) cells) a binned
// estimate is flagged as having too few samples for its bins.
inline constexpr int kMiSamplesPerCell = 5;

// v mapped to [0, 1] by (v - min) / (max - min); all zeros when max == min.
// Non-finite inputs are the caller's error (filtered out before).
std::vector<double> NormalizeUnit(std::span<const double> v);

// numpy.digitize(v, arange(0, 1, 0.1)) - 1, clamped to [0, 9].
int DigitizeUnit(double v);

// Plug-in MI (nats) of two label sequences of equal length (labels >= 0).
// 0 for fewer than two samples.
double DiscreteMi(std::span<const int> x, std::span<const int> y);

// KSG estimate (nats, >= 0) between the joint of `xs` (each inner vector one
// coordinate, all of length N) and y (length N). k in [1, N-1].
double KsgMi(const std::vector<std::vector<double>>& xs,
             std::span<const double> y, int k = 3);

enum class MiEstimator { kBinned, kKsg };

struct MiOptions {
  MiEstimator estimator = MiEstimator::kBinned;
  int repeats = 20;      // >= 1
  double jitter = 0.01;  // >= 0, in normalised units
  int ksg_k = 3;
  uint64_t seed = 0;
  // Permutations of the permutation null (>= 0; 0: no null, its fields NaN).
  int shuffles = 200;
};

struct MiEstimate {
  double mean = 0, std = 0;  // over the repeats (std = 0 for one repeat)
  int64_t n = 0;             // samples used
  // The permutation null (NaN without shuffles): its mean, the bias-
  // corrected estimate mean - null_mean, and the permutation p-value.
  double null_mean = NAN, corrected = NAN, p_value = NAN;
  // Binned: n < kMiSamplesPerCell x joint bins (too few samples for them).
  bool few_samples = false;
};

// MI between the joint of `xs` (one or two variables, raw values) and y (raw
// values), normalised, jittered and estimated as above. `stream` separates
// the jitter draws of different variable sets. InvalidArgument for length
// mismatches, bad options or non-finite values.
Result<MiEstimate> EstimateMi(const std::vector<std::vector<double>>& xs,
                              std::span<const double> y, const MiOptions& opt,
                              uint64_t stream = 0);

}  // namespace xw

#endif  // XWIRES_API_MUTUAL_INFO_H_
