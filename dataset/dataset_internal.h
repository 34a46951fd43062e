// Internal: the narrow interface that module code outside Dataset's own
// implementation (the contribution bundles, dataset/bundle_*.cc) uses for
// what the public Dataset API (dataset.h) does not offer. Implemented by
// dataset_internal.cc on Dataset's state, so callers depend on these
// declarations only, never on Dataset::Impl's layout (dataset_impl.h).
//
// Not part of the public API: include/xwires/ does not see this header.
// Thread-safety: as Dataset (one thread at a time per Dataset object).
#ifndef XWIRES_DATASET_DATASET_INTERNAL_H_
#define XWIRES_DATASET_DATASET_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/dataset.h"

namespace xw::internal {

// Every stored model's profile definition, by model id: the JSON text stored
// in `profiles.json` ("" for external profiles such as `pytorch`). ModelRow
// carries the profile's name only. Errors name xwires.db.
Result<std::map<int64_t, std::string>> ModelProfileDefinitions(
    const Dataset& ds);

// Deletes search `search_id` if no trial refers to it; a search still in use
// (or an unknown id) is left alone and is not an error. FailedPrecondition on
// a read-only dataset; SQLite errors name xwires.db.
Status DeleteSearchIfUnused(Dataset& ds, int64_t search_id);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_DATASET_INTERNAL_H_
