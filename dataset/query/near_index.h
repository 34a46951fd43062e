// Internal: Dataset::Near served by the index of near_schema.h.
//
// The normalisation ranges come from trials_near_bounds (exact, no scan).
// The R*Tree is walked best-first by a query callback that scores each node
// and entry with a lower bound of the distance of anything inside its box
// (near_space.h's Distance of the box point nearest the target), so entries
// come out in non-decreasing bound order; each is then scored exactly from
// its trials row, and the walk stops once the next bound exceeds the k-th
// best exact distance (equal bounds are still read: a tie with a smaller id
// wins). The callback prunes every box whose bound exceeds the smaller of
// the k-th best exact distance and the k-th smallest upper bound of the
// trial boxes scored so far (k distinct qualifying trials lie at or below
// it), so few entries reach SQLite's queue. The answer is therefore the
// scan's, ties included.
#ifndef XWIRES_DATASET_QUERY_NEAR_INDEX_H_
#define XWIRES_DATASET_QUERY_NEAR_INDEX_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "dataset/store/dataset_impl.h"
#include "near_space.h"
#include "xwires/core/status.h"
#include "xwires/dataset/query/query.h"

namespace xw::near {

// The k nearest trials (ascending by distance, then id), or nullopt when
// the index cannot serve the query: `q` filters the trials (the ranges would
// then be those of the matching trials), a target field is not indexed
// (beta1, beta2, seed), or more than a budget of candidates lie at the
// k-th distance (the scan is then cheaper). Sets `space`'s ranges.
Result<std::optional<std::vector<Scored>>> IndexNear(const Dataset::Impl& impl,
                                                     NearSpace& space,
                                                     const TrialQuery& q,
                                                     size_t k);

}  // namespace xw::near

#endif  // XWIRES_DATASET_QUERY_NEAR_INDEX_H_
