// Internal: the SQL side of stored analyses (analysis.h), shared by
// StoreAnalysis and the batch writes of imports and merges, which store
// analyses in the transaction that adds the trials they describe. These run
// inside the caller's transaction and may throw SQLite::Exception (callers
// wrap them in sql::Guarded).
#ifndef XWIRES_DATASET_STORE_ANALYSIS_ROWS_H_
#define XWIRES_DATASET_STORE_ANALYSIS_ROWS_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::internal {

// `a` checked (CheckAnalysis) and in stored form: canonical JSON, trial ids
// ascending, created_at and toolkit filled in.
Result<AnalysisRecord> StoredForm(const AnalysisRecord& a,
                                  const std::string& what);

// Inserts a record in stored form with its links and runs; NotFound (naming
// `what` and the id) when one of its trials does not exist.
Result<int64_t> InsertAnalysis(SQLite::Database& db, const AnalysisRecord& a,
                               const std::string& what);

// True when a result equal to `a` (stored form; every field but the id) is
// already stored: importing the same analysis twice stores it once.
bool HasAnalysis(SQLite::Database& db, const AnalysisRecord& a);

}  // namespace xw::internal

#endif  // XWIRES_DATASET_STORE_ANALYSIS_ROWS_H_
