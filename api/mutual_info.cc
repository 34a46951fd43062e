#include "xwires/api/mutual_info.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "xwires/core/rng.h"

namespace xw {

std::vector<double> NormalizeUnit(std::span<const double> v) {
  std::vector<double> out(v.size(), 0.0);
  if (v.empty()) return out;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double range = *hi - *lo;
  if (!(range > 0)) return out;
  for (size_t i = 0; i < v.size(); ++i) out[i] = (v[i] - *lo) / range;
  return out;
}

int DigitizeUnit(double v) {
  // numpy.arange(0, 1, 0.1) computes its edges as i * 0.1; counting the edges
  // <= v reproduces numpy.digitize's right=False convention bit for bit
  // (0.3 lands in bin 2 because 3 * 0.1 = 0.30000000000000004).
  int count = 0;
  for (int i = 0; i < kMiBins; ++i) {
    if (static_cast<double>(i) * 0.1 <= v) ++count;
  }
  return std::clamp(count - 1, 0, kMiBins - 1);
}

double DiscreteMi(std::span<const int> x, std::span<const int> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0.0;
  std::unordered_map<int, int64_t> cx, cy;
  std::unordered_map<int64_t, int64_t> cxy;
  for (size_t i = 0; i < n; ++i) {
    ++cx[x[i]];
    ++cy[y[i]];
    ++cxy[(static_cast<int64_t>(x[i]) << 32) | static_cast<uint32_t>(y[i])];
  }
  // Summed in a fixed order (sorted joint keys) so the value does not depend
  // on the hash table's iteration order.
  std::vector<std::pair<int64_t, int64_t>> joint(cxy.begin(), cxy.end());
  std::sort(joint.begin(), joint.end());
  const double nn = static_cast<double>(n);
  double mi = 0.0;
  for (const auto& [key, c] : joint) {
    const int xi = static_cast<int>(key >> 32);
    const int yi = static_cast<int>(static_cast<uint32_t>(key & 0xffffffff));
    const double pxy = static_cast<double>(c) / nn;
    mi += pxy *
          std::log(static_cast<double>(c) * nn /
                   (static_cast<double>(cx[xi]) * static_cast<double>(cy[yi])));
  }
  return std::max(mi, 0.0);
}

namespace {

// Digamma at positive integers: psi(n) = -gamma + sum_{i<n} 1/i.
class IntDigamma {
 public:
  explicit IntDigamma(int64_t max_n) : table_(max_n + 2) {
    constexpr double kEulerGamma = 0.57721566490153286061;
    table_[1] = -kEulerGamma;
    for (size_t i = 2; i < table_.size(); ++i)
      table_[i] = table_[i - 1] + 1.0 / (i - 1);
  }
  double operator()(int64_t n) const { return table_[n]; }

 private:
  std::vector<double> table_;
};

}  // namespace

double KsgMi(const std::vector<std::vector<double>>& xs,
             std::span<const double> y, int k) {
  const int64_t n = static_cast<int64_t>(y.size());
  if (n < 2 || xs.empty()) return 0.0;
  k = std::clamp<int>(k, 1, static_cast<int>(n - 1));
  const IntDigamma psi(n);
  std::vector<double> dist(n);
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    // Max-norm distances in the joint space; the k-th smallest among j != i.
    for (int64_t j = 0; j < n; ++j) {
      double d = std::fabs(y[j] - y[i]);
      for (const auto& x : xs) d = std::max(d, std::fabs(x[j] - x[i]));
      dist[j] = j == i ? std::numeric_limits<double>::infinity() : d;
    }
    std::vector<double> sorted = dist;
    std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end());
    const double eps = sorted[k - 1];
    int64_t nx = 0, ny = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double dx = 0.0;
      for (const auto& x : xs) dx = std::max(dx, std::fabs(x[j] - x[i]));
      if (dx < eps) ++nx;
      if (std::fabs(y[j] - y[i]) < eps) ++ny;
    }
    acc += psi(nx + 1) + psi(ny + 1);
  }
  const double mi = psi(k) + psi(n) - acc / static_cast<double>(n);
  return std::max(mi, 0.0);
}

Result<MiEstimate> EstimateMi(const std::vector<std::vector<double>>& xs,
                              std::span<const double> y, const MiOptions& opt,
                              uint64_t stream) {
  if (xs.empty() || xs.size() > 2) {
    return Status::InvalidArgument(
        "mutual information: expected one or two variables, got " +
        std::to_string(xs.size()));
  }
  if (opt.repeats < 1)
    return Status::InvalidArgument("mi: repeats must be >= 1");
  if (!(opt.jitter >= 0) || !std::isfinite(opt.jitter)) {
    return Status::InvalidArgument("mi: jitter must be a finite value >= 0");
  }
  if (opt.ksg_k < 1) return Status::InvalidArgument("mi: ksg k must be >= 1");
  const size_t n = y.size();
  for (const auto& x : xs) {
    if (x.size() != n) {
      return Status::InvalidArgument("mutual information: variable of length " +
                                     std::to_string(x.size()) + " vs " +
                                     std::to_string(n) + " divergence values");
    }
  }
  auto finite = [](std::span<const double> v) {
    return std::all_of(v.begin(), v.end(),
                       [](double d) { return std::isfinite(d); });
  };
  if (!finite(y))
    return Status::InvalidArgument(
        "mutual information: non-finite target value");
  for (const auto& x : xs) {
    if (!finite(x))
      return Status::InvalidArgument(
          "mutual information: non-finite variable value");
  }

  if (opt.shuffles < 0) return Status::InvalidArgument("mi: shuffles must be >= 0");

  std::vector<std::vector<double>> base;
  for (const auto& x : xs) base.push_back(NormalizeUnit(x));
  base.push_back(NormalizeUnit(y));
  const size_t vars = base.size();

  // One estimate of the jittered values with draw `r` of stream `draws`;
  // `order`, if not empty, permutes the divergences (the null).
  std::vector<std::vector<double>> noisy(vars, std::vector<double>(n));
  auto once = [&](uint64_t draws, int r, const std::vector<size_t>& order) {
    const Philox rng(opt.seed, MixStream(MixStream(draws, stream), r));
    for (size_t v = 0; v < vars; ++v) {
      const bool target = v + 1 == vars;
      for (size_t i = 0; i < n; ++i) {
        const size_t src = target && !order.empty() ? order[i] : i;
        const double u = rng.Uniform(v * n + i);
        noisy[v][i] = base[v][src] + opt.jitter * (2.0 * u - 1.0);
      }
    }
    if (opt.estimator == MiEstimator::kKsg) {
      std::vector<std::vector<double>> xv(noisy.begin(), noisy.end() - 1);
      return KsgMi(xv, noisy.back(), opt.ksg_k);
    }
    std::vector<int> bx(n), by(n);
    for (size_t i = 0; i < n; ++i) {
      int label = 0;
      for (size_t v = 0; v + 1 < vars; ++v)
        label = label * kMiBins + DigitizeUnit(noisy[v][i]);
      bx[i] = label;
      by[i] = DigitizeUnit(noisy.back()[i]);
    }
    return DiscreteMi(bx, by);
  };

  std::vector<double> values(opt.repeats);
  for (int r = 0; r < opt.repeats; ++r)
    values[r] = once(StreamId("analysis/mi/jitter"), r, {});
  MiEstimate e;
  e.n = static_cast<int64_t>(n);
  for (double v : values) e.mean += v;
  e.mean /= opt.repeats;
  double ss = 0.0;
  for (double v : values) ss += (v - e.mean) * (v - e.mean);
  e.std = std::sqrt(ss / opt.repeats);  // numpy.std (ddof 0)
  if (opt.estimator == MiEstimator::kBinned) {
    double cells = kMiBins;
    for (size_t v = 0; v + 1 < vars; ++v) cells *= kMiBins;
    e.few_samples = static_cast<double>(n) < kMiSamplesPerCell * cells;
  }
  if (opt.shuffles == 0 || n < 2) return e;

  // The permutation null: Fisher-Yates shuffles of the divergences, each
  // with its own jitter draw.
  const uint64_t null_stream = StreamId("analysis/mi/null");
  std::vector<size_t> order(n);
  double null_sum = 0;
  int64_t at_least = 0;
  for (int s = 0; s < opt.shuffles; ++s) {
    const Philox rng(opt.seed, MixStream(MixStream(null_stream, stream), s));
    for (size_t i = 0; i < n; ++i) order[i] = i;
    for (size_t i = n - 1; i > 0; --i) {
      // (2^32 mod (i + 1)) / 2^32 modulo bias: negligible for any n here.
      const size_t j = rng.U32(i) % (i + 1);
      std::swap(order[i], order[j]);
    }
    const double v = once(StreamId("analysis/mi/null-jitter"), s, order);
    null_sum += v;
    at_least += v >= e.mean;
  }
  e.null_mean = null_sum / opt.shuffles;
  e.corrected = e.mean - e.null_mean;
  e.p_value = static_cast<double>(1 + at_least) / (1 + opt.shuffles);
  return e;
}

}  // namespace xw
