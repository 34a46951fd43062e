// Benjamini-Hochberg false-discovery-rate control over a search's p-values
// (significance.h). The reject rule is statsmodels' fdrcorrection: reject
// every p up to the largest rank i with p_(i) <= q i / m, which is the same
// set as adjusted <= q without a division's rounding.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "xwires/core/significance.h"

namespace xw::stats {
namespace {

// i / m for the 0-based rank i - 1, computed as statsmodels does.
double Ecdf(size_t rank, size_t m) {
  return static_cast<double>(rank + 1) / static_cast<double>(m);
}

}  // namespace

Result<BhResult> BenjaminiHochberg(std::span<const double> p, double q) {
  if (!(q > 0 && q < 1)) {
    return Status::InvalidArgument("the FDR level q must lie in (0, 1), got " +
                                   std::to_string(q));
  }
  const size_t m = p.size();
  for (size_t i = 0; i < m; ++i) {
    if (!(p[i] >= 0 && p[i] <= 1)) {
      return Status::InvalidArgument("p-value " + std::to_string(i) +
                                     " is not in [0, 1]: " + std::to_string(p[i]));
    }
  }
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return p[x] < p[y]; });
  BhResult r;
  r.adjusted.assign(m, 1.0);
  r.reject.assign(m, 0);
  double running = 1.0;
  for (size_t rank = m; rank-- > 0;) {
    const double raw = p[order[rank]] / Ecdf(rank, m);
    running = std::min(running, raw);
    r.adjusted[order[rank]] = std::min(1.0, running);
  }
  size_t last = 0;  // number of rejections
  for (size_t rank = 0; rank < m; ++rank) {
    if (p[order[rank]] <= Ecdf(rank, m) * q) {
      last = rank + 1;
    }
  }
  for (size_t rank = 0; rank < last; ++rank) r.reject[order[rank]] = 1;
  return r;
}

}  // namespace xw::stats
