// What bundles need from a Dataset beyond its public API, built on that API
// plus the module-internal interface of dataset_internal.h (profile
// definitions, which ModelRow does not carry).
// Never reaches into Dataset::Impl. Same thread-safety as Dataset: one thread
// per Dataset object.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_STORE_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/run_record.h"

namespace xw::bundle {

// Model id -> profile definition (JSON text; "" for external profiles).
Result<std::map<int64_t, std::string>> ModelProfiles(const Dataset& ds);

// A stored trial as the record that would store it again: every field, the
// profile definitions, curves (if `curves`), weights (if `weights`; their
// sha256 is verified by LoadWeights). search_id and provenance are copied.
Result<TrialRecord> RecordFromRow(
    const Dataset& ds, const TrialRow& row,
    const std::map<int64_t, std::string>& profiles, bool curves, bool weights);

// Content hash (TrialContentSha256) -> id of the stored trials that could
// equal one of `candidates` (records without weights are fine): curves are
// loaded only for stored trials whose cheap key (TrialKeySha256) matches
// one. The lowest id when two stored trials have the same content.
Result<std::map<std::string, int64_t>> StoredContentHashes(
    const Dataset& ds, const std::vector<TrialRecord>& candidates);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_STORE_H_
