// Analysis results (`xwires compare --store`, `attribute`, `mi --store`)
// stored in the dataset next to the trials they describe (schema version 2,
// docs/dataset.md):
//   analyses(id, kind compare|attribute|mi, created_at, toolkit, summary,
//            result_json)
//   analysis_trials(analysis_id, trial_id)   the trials a result describes:
//            compare and attribute one, mi every trial it was computed over
//   analysis_runs(id, analysis_id, knob, direction, profile, value_json,
//            status, test_acc, test_loss, weights_sha256)   attribute only
// A result is stored with its trials and runs in one transaction, travels
// with its trials through bundles and merges, and is deleted with any of
// its trials (it would otherwise describe data that is gone).
//
// Thread-safety: as Dataset (one thread at a time per Dataset object).
#ifndef XWIRES_DATASET_STORE_ANALYSIS_H_
#define XWIRES_DATASET_STORE_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

// One retraining of an attribution.
struct AnalysisRun {
  std::string knob;        // "adam.variant"; "" for baselines
  std::string direction;   // baseline | a_to_b | b_to_a
  std::string profile;     // the trained profile's name
  std::string value_json;  // the knob's value in this run ("" for baselines)
  std::string status;      // ok | diverged | failed | incomplete
  double test_acc = kUnknown, test_loss = kUnknown;
  std::string weights_sha256;  // "" or 64 lowercase hex digits
};

struct AnalysisRecord {
  int64_t id = 0;    // set when read back; ignored when storing
  std::string kind;  // compare | attribute | mi
  // The trials the result describes (ids in this dataset): exactly one for
  // compare and attribute, at least one for mi; ascending when read back.
  std::vector<int64_t> trial_ids;
  std::string created_at;  // UTC "YYYY-MM-DDTHH:MM:SSZ"; "" = now
  std::string toolkit;     // producer, e.g. "xwires 0.1.0"; "" = this build
  std::string summary;     // one line for listings
  // A JSON object; stored in canonical form (compact, keys sorted), so a
  // result reads back, and arrives in another dataset, as the same text.
  std::string result_json;
  std::vector<AnalysisRun> runs;  // attribute only
};

// The rules every stored result satisfies (InvalidArgument naming `what`,
// the field and the value): kind; the number of trials for the kind, no id
// listed twice; created_at's form; result_json a JSON object and
// value_json empty or JSON; runs only for attribute, each with a known
// direction and status, a test accuracy unknown or in [0, 1], a test loss
// unknown or finite (+-inf only when diverged), weights_sha256 empty or hex.
Status CheckAnalysis(const AnalysisRecord& a, const std::string& what);

// Checks `a`, then stores it with its trial links and runs in one
// transaction; returns its id. FailedPrecondition for a read-only dataset,
// NotFound for an unknown trial id.
Result<int64_t> StoreAnalysis(Dataset& ds, const AnalysisRecord& a);

// Stored results, oldest first: those describing `trial_id` (< 0: all),
// of `kind` ("" = any).
Result<std::vector<AnalysisRecord>> LoadAnalyses(const Dataset& ds,
                                                 int64_t trial_id = -1,
                                                 const std::string& kind = "");

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_ANALYSIS_H_
