// Internal: the metric of Dataset::Near, shared by its two plans, the full
// scan (near_query.cc) and the index (near_index.cc), so that both compute
// every distance with the same floating-point operations in the same order
// and return the same trials, ties included.
//
// Distance between a trial and the target: Euclidean over the target's
// fields, each normalised by the range of the stored values that qualify
// (finite, and > 0 on log scale, in every target field): x -> (x - t) /
// (hi - lo), or / 1 when the range is a single value, where x, t, lo and hi
// are log10 of the raw values for lr and adam_eps and the raw values
// otherwise, lo and hi the normalised smallest and largest raw value.
#ifndef XWIRES_DATASET_QUERY_NEAR_SPACE_H_
#define XWIRES_DATASET_QUERY_NEAR_SPACE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/query/query.h"

namespace xw::near {

struct NearSpace {
  std::vector<std::string> columns;  // SQL over `trials t`, one per field
  std::vector<bool> log_scale;
  std::vector<int> dim;        // index in kNearDims (near_schema.h), or -1
  std::vector<double> target;      // normalised
  std::vector<double> raw_target;  // as given
  std::vector<double> span;    // set by SetRange

  size_t size() const { return columns.size(); }
  // log10 on log scale (NaN unless v > 0), else v.
  double Transform(size_t k, double v) const;
  // The ranges from the raw extremes of the qualifying values.
  void SetRange(const std::vector<double>& raw_lo,
                const std::vector<double>& raw_hi);
  // The distance of the point with normalised coordinates x[0..size()).
  // Monotone in each |x[k] - target[k]|: a point nearer the target in every
  // field is never farther, which makes bounds computed from a box safe.
  double Distance(const double* x) const;
};

// Resolves the target's fields (filter-language names) and normalises its
// values. InvalidArgument for an empty target, a field that is not a
// hyperparameter, or a value that is not finite (or, on log scale, not
// positive).
Result<NearSpace> ResolveTarget(const NearTarget& target);

// The k nearest of (distance, trial id) candidates: ascending by distance,
// then by id.
using Scored = std::pair<double, int64_t>;

}  // namespace xw::near

#endif  // XWIRES_DATASET_QUERY_NEAR_SPACE_H_
