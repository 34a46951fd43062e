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
  // When set, the batch's one trial replaces this pending row (search_log.h)
  // and takes its id; NotFound if there is no pending row with that id.
  std::optional<int64_t> replaces_pending;
};
struct BatchResult {
  std::vector<int64_t> trial_ids;  // in input order
  int64_t searches_added = 0;
  int64_t analyses_added = 0, analyses_skipped = 0;
};

// Dataset::AddTrials plus `extras`, all or nothing: validation of every
// trial and analysis before anything is written, one HDF5 bundle, one
// transaction for searches, trials and analyses.
Result<BatchResult> AddBatch(Dataset& ds,
                             const std::vector<TrialRecord>& trials,
                             const BatchExtras& extras);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_DATASET_INTERNAL_H_
