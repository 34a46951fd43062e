// Label splits shared by the permutation tests of significance.h: every way
// to choose which n_a of n pooled replicas form the first group, or a fixed
// Philox-drawn sample of them when there are too many to enumerate.
#ifndef XWIRES_SRC_STATS_SPLITS_H_
#define XWIRES_SRC_STATS_SPLITS_H_

#include <cstdint>
#include <limits>

#include "xwires/core/rng.h"

namespace xw::stats::internal {

// C(n, k), saturating at UINT64_MAX (n <= 64 here).
inline uint64_t Binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  if (k > n - k) k = n - k;
  unsigned __int128 c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * static_cast<unsigned>(n - k + i) / static_cast<unsigned>(i);
    if (c > std::numeric_limits<uint64_t>::max()) {
      return std::numeric_limits<uint64_t>::max();
    }
  }
  return static_cast<uint64_t>(c);
}

struct SplitPlan {
  bool exact = true;
  uint64_t count = 0;  // splits visited
};

// Calls visit(mask) for each split (bit i set: pooled item i in the first
// group). Exact: all C(n, n_a) masks in increasing order (Gosper's hack),
// the identity split (the n_a lowest bits) first. Otherwise `resamples`
// uniformly drawn subsets: draw r is a partial Fisher-Yates shuffle fed by
// words r * n + j of Philox(seed, StreamId(stream)). Needs 1 <= n_a < n <= 64.
template <typename Visit>
SplitPlan ForEachSplit(int n, int n_a, uint64_t max_exact, int resamples,
                       uint64_t seed, const char* stream, Visit&& visit) {
  SplitPlan plan;
  const uint64_t total = Binomial(n, n_a);
  if (total <= max_exact) {
    uint64_t mask = (uint64_t{1} << n_a) - 1;  // n_a < 64
    for (uint64_t i = 0; i < total; ++i) {
      visit(mask);
      const uint64_t low = mask & (~mask + 1);
      const uint64_t ripple = mask + low;
      mask = (((ripple ^ mask) >> 2) / low) | ripple;
    }
    plan.count = total;
    return plan;
  }
  plan.exact = false;
  const Philox rng(seed, StreamId(stream));
  int order[64];
  for (int r = 0; r < resamples; ++r) {
    for (int i = 0; i < n; ++i) order[i] = i;
    uint64_t mask = 0;
    for (int j = 0; j < n_a; ++j) {
      const uint64_t word = rng.U32(static_cast<uint64_t>(r) * n + j);
      const int pick = j + static_cast<int>((word * static_cast<uint64_t>(n - j)) >> 32);
      const int t = order[j];
      order[j] = order[pick];
      order[pick] = t;
      mask |= uint64_t{1} << order[j];
    }
    visit(mask);
  }
  plan.count = static_cast<uint64_t>(resamples);
  return plan;
}

}  // namespace xw::stats::internal

#endif  // XWIRES_SRC_STATS_SPLITS_H_
