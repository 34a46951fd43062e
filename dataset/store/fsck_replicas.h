// Internal: fsck's checks and repairs of replicas and their statistics
// (fsck.h, replicas.h).
#ifndef XWIRES_DATASET_STORE_FSCK_REPLICAS_H_
#define XWIRES_DATASET_STORE_FSCK_REPLICAS_H_

#include <cstdint>
#include <set>
#include <string>

#include "dataset_impl.h"
#include "xwires/dataset/store/fsck.h"

namespace xw::internal {

// Marks every replica file as referenced; a row whose file is missing or
// unreadable is a "replica-file" issue and its id goes to `bad_rows`.
// Throws SQLite::Exception (call inside sql::Guarded).
void CheckReplicaFiles(const Dataset::Impl& impl, FsckReport& r,
                       std::set<std::string>& referenced, std::set<int64_t>& bad_rows);

// Every stored replica under the store's rules ("invalid-replica"), and every
// statistics row against what its replicas give now: its verdict and every
// number (CheckReplicaStats), or replicas it counts that are not stored
// ("invalid-verdict").
Status CheckReplicaValues(const Dataset& ds, FsckReport& r);

// Repair: deletes the replica rows in `bad_rows` (their data are lost;
// `xwires replicate` trains them again), then recomputes every statistics row
// from the replicas left: one that differs is replaced, one over replicas that
// are no longer all stored is deleted. Marks the "replica-file" and
// "invalid-verdict" issues repaired. Under the caller's exclusive lock.
Status RepairReplicas(Dataset& ds, const std::set<int64_t>& bad_rows, FsckReport& r);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_FSCK_REPLICAS_H_
