// Internal: the replicas and statistics of an AddBatch (dataset_internal.h,
// BatchExtras): checked and planned before any file is written, their data
// added to the batch's HDF5 bundle, their rows inserted in its transaction.
#ifndef XWIRES_DATASET_STORE_REPLICA_BATCH_H_
#define XWIRES_DATASET_STORE_REPLICA_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dataset_impl.h"
#include "dataset_internal.h"
#include "model_file.h"

namespace xw::internal {

// Which of the extras' replicas and statistics are added (indices into
// extras.replicas / extras.replica_stats); the others are skipped.
struct ReplicaPlan {
  std::vector<size_t> replicas, stats;
  int64_t replicas_skipped = 0, stats_skipped = 0;
  bool empty() const { return replicas.empty() && stats.empty(); }
};

// Checks the extras' replicas and statistics against `trials` (the batch)
// and the stored trials, and decides what is skipped (BatchExtras). Errors
// name "replica i" / "replica statistics i" and the rule.
Result<ReplicaPlan> PlanBatchReplicas(const Dataset::Impl& impl,
                                      const std::vector<TrialRecord>& trials,
                                      const BatchExtras& extras);

// The HDF5 group of planned replica `i` in the batch's bundle.
std::string BatchReplicaGroup(size_t i);

// Appends the planned replicas' groups to the batch's bundle (pointing into
// `extras`, which must outlive `bundle`).
void AddReplicaGroups(const BatchExtras& extras, const ReplicaPlan& plan,
                      std::vector<BundleModel>* bundle);

// Inserts the planned rows, inside the caller's transaction; `trial_ids`
// are the batch's new trial ids, `file` the bundle. Throws
// SQLite::Exception.
void InsertBatchReplicas(SQLite::Database& db, const BatchExtras& extras,
                         const ReplicaPlan& plan, const std::vector<int64_t>& trial_ids,
                         const std::string& file);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_REPLICA_BATCH_H_
