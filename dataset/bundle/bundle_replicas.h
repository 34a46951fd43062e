// replicas.json of a bundle (format version 3): the replicas of the bundle's
// trials and the statistics over them (docs/significance.md), each naming
// its trial by its index in trials.json. A replica's curve, per-example
// test predictions and (when stored) weights travel in its own file
// replicas/<trial>/<i>.h5 (group "replica", the store's replica layout).
//
//   {"replicas": [{"trial": int, "profile": str, "family": str,
//                  "replica": int, "params": {...}, "status": str,
//                  "test_acc": real, "test_loss": real,
//                  "first_nonfinite_step": int or null, "n_epochs": int,
//                  "n_examples": int, "has_weights": bool,
//                  "weights_sha256": str, "wall_time_s": real,
//                  "fingerprint": {...}, "file": str}, ...],
//    "statistics": [{"trial": int, "profile_a": str, "profile_b": str,
//                    "family": str, "k_a": int, "k_b": int,
//                    "num_classes": int, "test_labels": [int, ...],
//                    "result": {PairStatisticsJson}}, ...]}
//
// where a real is a number, null or "inf"/"-inf". Every field is required
// and no other is allowed. Thread-safe.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_REPLICAS_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_REPLICAS_H_

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bundle_trials.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::bundle {

struct BundleReplica {
  size_t trial = 0;  // index into trials.json
  ReplicaRecord record;  // trial_id unused; curves/predictions from `file`
  std::string file;      // archive entry
};
struct BundleReplicaStats {
  size_t trial = 0;
  ReplicaStatsRecord record;  // trial_id unused
};
struct BundleReplicas {
  std::vector<BundleReplica> replicas;
  std::vector<BundleReplicaStats> stats;
};

// The archive entry of replica `i` of trial `k`.
std::string ReplicaEntryName(size_t k, size_t i);

// replicas.json text for `r` (records in stored form).
std::string ReplicasToJson(const BundleReplicas& r);

// Parses untrusted replicas.json against the bundle's trials: the schema
// above (at most 256 MiB), trial indices in range, profiles among the
// trial's models, files named replicas/<trial>/<i>.h5, listed in
// `listed_files` and used once, and no listed replicas/ file unused. The
// records' curves and predictions are read later from their files
// (OpenBundle). Errors name "replicas.json" and the field path.
Result<BundleReplicas> ParseReplicasJson(std::string_view text,
                                         const std::vector<BundleTrial>& trials,
                                         const std::set<std::string>& listed_files);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_REPLICAS_H_
