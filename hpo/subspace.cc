#include "xwires/hpo/subspace.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util.h"

namespace xw::hpo {

Result<Dimension> SplitDimension(const Dimension& d, int half, double phi,
                                 LogSplit log_split) {
  if (!(phi >= 0.0 && phi <= 1.0)) {
    return Status::InvalidArgument("overlap phi must be in [0, 1] (got " +
                                   internal::Num(phi) + ")");
  }
  if (half != 0 && half != 1) {
    return Status::InvalidArgument("half must be 0 (low) or 1 (high), got " +
                                   std::to_string(half));
  }
  XW_RETURN_IF_ERROR(ValidateDimension(d));
  const bool in_log = d.log && log_split == LogSplit::kLogSpace;
  const double lo = in_log ? std::log10(d.low) : d.low;
  const double hi = in_log ? std::log10(d.high) : d.high;
  const double r = hi - lo;
  const double width = r / 2 + phi * r / 2;
  Dimension out = d;
  if (half == 0) {
    double upper = lo + width;
    if (in_log) upper = std::pow(10.0, upper);
    if (d.type == DimType::kInteger) upper = std::floor(upper);
    out.high = std::clamp(upper, d.low, d.high);
  } else {
    double lower = hi - width;
    if (in_log) lower = std::pow(10.0, lower);
    if (d.type == DimType::kInteger) lower = std::ceil(lower);
    out.low = std::clamp(lower, d.low, d.high);
  }
  return out;
}

int NumSubspaces(const SearchSpace& space) { return 1 << space.size(); }

Result<SearchSpace> Subspace(const SearchSpace& space, int index, double phi,
                             LogSplit log_split) {
  if (space.size() > 16) {
    return Status::InvalidArgument(
        "HyperSpace partition of " + std::to_string(space.size()) +
        " dimensions would need 2^" + std::to_string(space.size()) +
        " subspaces; use no_subspaces or at most 16 dimensions");
  }
  if (index < 0 || index >= NumSubspaces(space)) {
    return Status::InvalidArgument("subspace index " + std::to_string(index) +
                                   " is outside [0, " +
                                   std::to_string(NumSubspaces(space)) + ")");
  }
  std::vector<Dimension> dims;
  for (int i = 0; i < space.size(); ++i) {
    XW_ASSIGN_OR_RETURN(
        Dimension h,
        SplitDimension(space.dim(i), (index >> i) & 1, phi, log_split));
    dims.push_back(std::move(h));
  }
  return SearchSpace::Create(std::move(dims));
}

Result<std::vector<SearchSpace>> HyperSpacePartition(const SearchSpace& space,
                                                     double phi,
                                                     LogSplit log_split) {
  std::vector<SearchSpace> out;
  if (space.size() > 16) return Subspace(space, 0, phi, log_split).status();
  for (int s = 0; s < NumSubspaces(space); ++s) {
    XW_ASSIGN_OR_RETURN(SearchSpace sub, Subspace(space, s, phi, log_split));
    out.push_back(std::move(sub));
  }
  return out;
}

}  // namespace xw::hpo
