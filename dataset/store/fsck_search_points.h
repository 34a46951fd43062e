// Internal: fsck's check that every search was written by one writer at a
// time. A point of a search is trained once: two finished or failed trials
// of one search at the same point of the same subspace, or two finished
// trials that complete the same pending row, mean two processes ran the
// search at once ("duplicate-point"; never repaired: which one to keep is
// the user's call).
#ifndef XWIRES_DATASET_STORE_FSCK_SEARCH_POINTS_H_
#define XWIRES_DATASET_STORE_FSCK_SEARCH_POINTS_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include "xwires/dataset/store/fsck.h"

namespace xw {

// Adds one "duplicate-point" issue per repeated point. Throws
// SQLite::Exception.
void CheckSearchPoints(SQLite::Database& db, FsckReport& r);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_FSCK_SEARCH_POINTS_H_
