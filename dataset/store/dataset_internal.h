// Internal: the narrow interface that dataset code outside Dataset's own
// implementation (fsck, the contribution bundles in dataset/bundle/) uses for
// what the public Dataset API (dataset.h) does not offer. Implemented by
// dataset_internal.cc on Dataset's state, so callers depend on these
// declarations only, never on Dataset::Impl's layout (dataset_impl.h).
//
// Not part of the public API: include/xwires/ does not see this header.
// Thread-safety: as Dataset (one thread at a time per Dataset object).
#ifndef XWIRES_DATASET_STORE_DATASET_INTERNAL_H_
#define XWIRES_DATASET_STORE_DATASET_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/store/run_record.h"

namespace xw::internal {

// Every stored model's profile definition, by model id: the JSON text stored
// in `profiles.json` ("" for external profiles such as `pytorch`). ModelRow
// carries the profile's name only. Errors name xwires.db.
Result<std::map<int64_t, std::string>> ModelProfileDefinitions(
    const Dataset& ds);

// Every stored trial with its models, in id order (what Dataset::Query gives
// for an empty TrialQuery, without the query language). Errors name xwires.db.
Result<std::vector<TrialRow>> AllTrials(const Dataset& ds);

// A stored trial as the record that would store it again: every field, the
// profile definitions (`profiles`: ModelProfileDefinitions), curves (if
// `curves`), weights (if `weights`; their sha256 is verified by LoadWeights).
// search_id and provenance are copied.
Result<TrialRecord> RecordFromRow(
    const Dataset& ds, const TrialRow& row,
    const std::map<int64_t, std::string>& profiles, bool curves, bool weights);

// What an import or a merge adds besides its trials, in the same
// transaction (AddBatch).
struct BatchAnalysis {
  AnalysisRecord record;              // its trial_ids are ignored
  std::vector<int64_t> stored_trials;  // described trials already stored
  std::vector<size_t> batch_trials;    // described trials of this batch
};
// A trial a replica (or its statistics) of a batch belongs to: a stored
// trial's id when `stored`, else the index of a trial of the batch.
struct BatchTrialRef {
  bool stored = false;
  int64_t value = 0;
};
struct BatchReplica {
  BatchTrialRef trial;
  ReplicaRecord record;  // its trial_id is ignored; curves, predictions and
                         // (when it has them) weights filled
};
struct BatchReplicaStats {
  BatchTrialRef trial;
  ReplicaStatsRecord record;  // its trial_id is ignored
};
struct BatchExtras {
  // Searches the batch's trials belong to. Each is looked up (same config,
  // space and objective as a stored one: that one) or added inside the
  // transaction. trial_search[k], when set, makes trial k's search
  // searches[*trial_search[k]] (its record's search_id is then ignored);
  // empty, or one entry per trial.
  std::vector<SearchRecord> searches;
  std::vector<std::optional<size_t>> trial_search;
  // Analyses of the batch's (and stored) trials. One equal to a stored
  // result (all its trials already stored) is skipped, not added again.
  std::vector<BatchAnalysis> analyses;
  // Replicas and statistics of the batch's (and stored) trials, checked as
  // StoreReplica does (CheckReplica, the trial has the profile). A replica
  // whose (trial, profile, family, replica) is already stored is skipped,
  // and so is a statistics row whose (trial, pair, family) is already
  // stored or that counts a skipped replica (the stored ones may differ).
  // Every statistics row must count replicas of the batch only (its
  // numbers are the caller's to have checked: CheckReplicaStats).
  std::vector<BatchReplica> replicas;
  std::vector<BatchReplicaStats> replica_stats;
};
struct BatchResult {
  std::vector<int64_t> trial_ids;  // in input order
  int64_t searches_added = 0;
  int64_t analyses_added = 0, analyses_skipped = 0;
  int64_t replicas_added = 0, replicas_skipped = 0;
  int64_t replica_stats_added = 0, replica_stats_skipped = 0;
};

// Dataset::AddTrials plus `extras`, all or nothing: validation of every
// trial and analysis before anything is written, one HDF5 bundle, one
// transaction for searches, trials and analyses.
Result<BatchResult> AddBatch(Dataset& ds,
                             const std::vector<TrialRecord>& trials,
                             const BatchExtras& extras);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_DATASET_INTERNAL_H_
