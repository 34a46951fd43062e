// Internal: the SQL rows of replicas and their statistics (replicas.h),
// shared by the one-at-a-time store path (replica_store.cc, replica_stats.cc)
// and the batches of imports and merges (replica_batch.cc). Callers hold a
// transaction and have checked the records (CheckReplica).
#ifndef XWIRES_DATASET_STORE_REPLICA_ROWS_H_
#define XWIRES_DATASET_STORE_REPLICA_ROWS_H_

#include <cstdint>
#include <string>

#include "sqlite_adapter.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::internal {

// Inserts `r` as a row of trial `trial_id` (r.trial_id is ignored) whose
// data live in group `group` of `file`; returns the new row id. Throws
// SQLite::Exception (e.g. on the UNIQUE slot), as every statement here.
int64_t InsertReplicaRow(SQLite::Database& db, const ReplicaRecord& r, int64_t trial_id,
                         const std::string& file, const std::string& group,
                         const std::string& sha);

// Inserts `s` as statistics of trial `trial_id` (s.trial_id is ignored),
// replacing a row of the same (trial, pair, family) when `replace`.
void InsertReplicaStatsRow(SQLite::Database& db, const ReplicaStatsRecord& s, int64_t trial_id,
                           bool replace);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_REPLICA_ROWS_H_
