// Internal: the nearest-neighbour index over trials (schema version 2) and
// the facts the query engine needs about it.
//
// Two structures, both kept by triggers on `trials` (so every write path --
// AddTrials, imports, merges, fsck --repair's deletions, a user's own SQL --
// maintains them in the transaction of the write, and a migration builds
// them for existing rows):
//
//   trials_near         an SQLite R*Tree (rtree module) with one box per
//                       trial over the raw values of kNearDims; a box holds
//                       its value (it is [v, v + a small width], rounded
//                       outwards to float32 by the module), so it bounds
//                       every distance from below. A value that is not
//                       "known" (below) is the sentinel box [-2, -1].
//   trials_near_bounds  per completeness mask (bit d set when dim d is
//                       known), the number of trials and each known dim's
//                       exact min and max: the normalisation ranges of an
//                       unfiltered --near, without a scan.
//
// A value is known when its normalised form is finite: for log-scale dims
// (lr, adam_eps) finite and > 0, for the others finite -- the rule the
// scan applies.
//
// Bulk adds (AddTrials) defer the insert trigger inside their transaction
// (a row in trials_near_deferred) and index their trials with two
// set-based statements before the commit: the same rows, about half the
// cost per trial of the per-row trigger program.
#ifndef XWIRES_DATASET_STORE_NEAR_SCHEMA_H_
#define XWIRES_DATASET_STORE_NEAR_SCHEMA_H_

#include <string>
#include <vector>

namespace xw::near {

struct NearDim {
  const char* column;  // trials column
  bool log_scale;      // normalised on log10
};

inline constexpr int kNumNearDims = 5;
inline constexpr NearDim kNearDims[kNumNearDims] = {
    {"lr", true},
    {"adam_eps", true},
    {"batch_size", false},
    {"epochs", false},
    {"weight_decay", false},
};

// Coordinates of the sentinel box of an unknown value.
inline constexpr double kUnknownLo = -2.0, kUnknownHi = -1.0;

// The statements that create, fill and maintain both tables (part of
// migration 2; never edit them once released).
std::vector<std::string> NearIndexStatements();

// Index the trials with ids in [?1, ?2] (added while the insert trigger was
// deferred): their boxes, then their counts and extremes.
std::vector<std::string> DeferredIndexStatements();

// What trials_near_bounds must hold (a SELECT of its columns), and the
// statements that rebuild both tables from the trials (fsck --repair).
std::string ExpectedBoundsQuery();
std::vector<std::string> RebuildStatements();

}  // namespace xw::near

#endif  // XWIRES_DATASET_STORE_NEAR_SCHEMA_H_
