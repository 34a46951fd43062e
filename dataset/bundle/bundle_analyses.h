// analyses.json of a bundle (format version 2): the analyses stored with the
// bundle's trials (analysis.h), each naming the trials it describes by
// their index in trials.json.
//
//   [{"kind": "compare" | "attribute" | "mi", "trials": [int, ...],
//     "created_at": "YYYY-MM-DDTHH:MM:SSZ", "toolkit": str, "summary": str,
//     "result": {...},
//     "runs": [{"knob": str, "direction": str, "profile": str,
//               "value_json": str, "status": str, "test_acc": real,
//               "test_loss": real, "weights_sha256": str}, ...]}, ...]
//
// where a real is a number, null or "inf"/"-inf". Every field is required
// and no other is allowed. Thread-safe.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_ANALYSES_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_ANALYSES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::bundle {

// An analysis of a bundle; record.trial_ids is unused (the trials are
// `trials`, indices into trials.json).
struct BundleAnalysis {
  AnalysisRecord record;
  std::vector<size_t> trials;
};

// analyses.json text (one analysis per line) for `analyses`, whose records
// are in stored form (canonical result_json).
std::string AnalysesToJson(const std::vector<BundleAnalysis>& analyses);

// Parses untrusted analyses.json of a bundle of `trial_count` trials: the
// schema above, at most 256 MiB and 32 levels of nesting, trial indices in
// range, and each analysis under the store's rules (CheckAnalysis). Errors
// name "analyses.json", the analysis index and the field.
Result<std::vector<BundleAnalysis>> ParseAnalysesJson(std::string_view text,
                                                      size_t trial_count);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_ANALYSES_H_
