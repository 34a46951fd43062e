#include "bundle_store.h"

#include <set>

#include "bundle_trials.h"
#include "dataset/store/dataset_internal.h"
#include "xwires/dataset/bundle/bundle.h"

namespace xw::bundle {

Result<std::map<std::string, int64_t>> StoredContentHashes(
    const Dataset& ds, const std::vector<TrialRecord>& candidates) {
  std::set<std::string> keys;
  for (const TrialRecord& t : candidates) keys.insert(TrialKeySha256(t));
  XW_ASSIGN_OR_RETURN(auto profiles, internal::ModelProfileDefinitions(ds));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, internal::AllTrials(ds));
  std::map<std::string, int64_t> out;
  for (const TrialRow& row : rows) {
    XW_ASSIGN_OR_RETURN(
        TrialRecord cheap,
        internal::RecordFromRow(ds, row, profiles, false, false));
    if (!keys.count(TrialKeySha256(cheap))) continue;
    XW_ASSIGN_OR_RETURN(TrialRecord full, internal::RecordFromRow(
                                              ds, row, profiles, true, false));
    out.emplace(TrialContentSha256(full), row.id);  // rows are in id order
  }
  return out;
}

}  // namespace xw::bundle
