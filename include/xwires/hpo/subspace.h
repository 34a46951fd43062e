// HyperSpace partition (Young et al., SBAC-PAD 2018): every dimension is split
// into two overlapping halves and the 2^D combinations are searched by
// independent GPs.
//
// For a dimension with range r = high - low (measured in the split coordinate,
// below) and overlap phi in [0, 1]:
//   low half  = [low, low + r/2 + phi*r/2]
//   high half = [high - r/2 - phi*r/2, high]
// Integer dimensions floor the low half's upper end and ceil the high half's
// lower end (as HyperSpace does). Subspace index s (0 <= s < 2^D) takes
// dimension i's low half when bit i of s is 0 and its high half when it is 1
// (HyperSpace's own code uses the opposite bit convention; only the numbering
// differs).
//
// Log dimensions: by default the formula is applied to log10 of the bounds,
// i.e. in the unit coordinate the GP works in, so each half covers
// (1 + phi)/2 of the decades. HyperSpace applies it to the raw bounds, which
// for lr in [1e-8, 0.1] puts 99.97% of the decades into the low half;
// LogSplit::kLinear reproduces that behaviour for comparison.
#ifndef XWIRES_HPO_SUBSPACE_H_
#define XWIRES_HPO_SUBSPACE_H_

#include <vector>

#include "xwires/core/status.h"
#include "xwires/hpo/space.h"

namespace xw::hpo {

enum class LogSplit { kLogSpace, kLinear };

inline constexpr double kDefaultOverlap = 0.5;

// Half `half` (0 = low, 1 = high) of `d`. InvalidArgument if phi is not in
// [0, 1] or half is not 0 or 1.
Result<Dimension> SplitDimension(const Dimension& d, int half, double phi,
                                 LogSplit log_split = LogSplit::kLogSpace);

// Number of subspaces of a D-dimensional space: 2^D.
int NumSubspaces(const SearchSpace& space);

// Subspace `index` of `space` (bit i of index picks dimension i's half).
Result<SearchSpace> Subspace(const SearchSpace& space, int index, double phi,
                             LogSplit log_split = LogSplit::kLogSpace);

// All 2^D subspaces in index order. InvalidArgument for D > 16 (65536
// subspaces is far beyond any sensible budget).
Result<std::vector<SearchSpace>> HyperSpacePartition(
    const SearchSpace& space, double phi,
    LogSplit log_split = LogSplit::kLogSpace);

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SUBSPACE_H_
