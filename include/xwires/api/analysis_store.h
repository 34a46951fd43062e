// Analysis results kept inside a dataset's xwires.db, next to the trials they
// describe, and the stored profile definitions the analyses retrain with.
//
// The dataset module's schema (dataset/schema.cc) has no extension hook, so
// the analysis tables are the api module's own, created on first write with
// CREATE TABLE IF NOT EXISTS in one IMMEDIATE transaction and versioned in
// their own table (docs/analysis.md):
//   analysis_schema_version(version, applied_at)
//   analysis_results(id, trial_id -> trials(id) ON DELETE CASCADE,
//                    kind 'compare' | 'attribute', created_at, toolkit,
//                    summary, result_json)
//   attribution_runs(id, result_id -> analysis_results(id) ON DELETE CASCADE,
//                    knob, direction 'baseline' | 'a_to_b' | 'b_to_a',
//                    profile, value_json, status, test_acc, test_loss,
//                    weights_sha256)
// Datasets without these tables read as having no stored results. Writers
// open the Dataset read-write first (its lock and migrations), then write
// through a second connection of their own (WAL, busy timeout).
//
// Thread-safety: as Dataset (one thread at a time per call).
#ifndef XWIRES_API_ANALYSIS_STORE_H_
#define XWIRES_API_ANALYSIS_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/dataset.h"

namespace xw {

inline constexpr int kAnalysisSchemaVersion = 1;

struct AttributionRunRow {
  std::string knob;        // "adam.variant"; "" for baselines
  std::string direction;   // baseline | a_to_b | b_to_a
  std::string profile;     // the trained profile's name
  std::string value_json;  // the knob's value in this run ("" for baselines)
  std::string status;      // ok | diverged
  double test_acc = kUnknown, test_loss = kUnknown;
  std::string weights_sha256;
};

struct AnalysisResultRow {
  int64_t id = 0;
  int64_t trial_id = 0;
  std::string kind;  // compare | attribute
  std::string created_at, toolkit, summary;
  std::string result_json;
  std::vector<AttributionRunRow> runs;  // attribute only
};

// Stores one result (and its runs) in one transaction; returns its id.
// FailedPrecondition for a read-only dataset, NotFound for an unknown trial,
// InvalidArgument for an unknown kind or result_json that is not JSON.
Result<int64_t> StoreAnalysisResult(Dataset& ds, const AnalysisResultRow& row);

// Stored results, oldest first; trial_id < 0: every trial's. kind "" = any.
Result<std::vector<AnalysisResultRow>> LoadAnalysisResults(
    const Dataset& ds, int64_t trial_id, const std::string& kind = "");

// The stored profile definition (canonical JSON) of every model of a trial,
// in the trial's model order; "" for external models (no definition).
Result<std::vector<std::string>> StoredProfileJson(const Dataset& ds,
                                                   const TrialRow& trial);

}  // namespace xw

#endif  // XWIRES_API_ANALYSIS_STORE_H_
