// What bundles need from a Dataset beyond its public API, built on that API
// plus the store's internal interface (dataset/store/dataset_internal.h:
// profile definitions, which ModelRow does not carry, and a stored trial as
// the record that would store it again).
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

// Content hash (TrialContentSha256) -> id of the stored trials that could
// equal one of `candidates` (records without weights are fine): curves are
// loaded only for stored trials whose cheap key (TrialKeySha256) matches
// one. The lowest id when two stored trials have the same content.
Result<std::map<std::string, int64_t>> StoredContentHashes(
    const Dataset& ds, const std::vector<TrialRecord>& candidates);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_STORE_H_
