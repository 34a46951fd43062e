// The stored profile definitions the analyses retrain with (the api
// module's one SQLite adapter, read-only).
//
// Analysis results themselves are dataset tables since schema version 2:
// xwires/dataset/store/analysis.h (StoreAnalysis, LoadAnalyses).
//
// Thread-safety: as Dataset (one thread at a time per call).
#ifndef XWIRES_API_ANALYSIS_STORE_H_
#define XWIRES_API_ANALYSIS_STORE_H_

#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

// The stored profile definition (canonical JSON) of every model of a trial,
// in the trial's model order; "" for external models (no definition).
Result<std::vector<std::string>> StoredProfileJson(const Dataset& ds,
                                                   const TrialRow& trial);

}  // namespace xw

#endif  // XWIRES_API_ANALYSIS_STORE_H_
