// Replicas and their statistics, stored next to the trials they belong to
// (schema versions 3 and 4, docs/dataset.md; method in docs/significance.md):
//   replicas(id, trial_id, profile, family, replica, params_json, status,
//            test_acc, test_loss, first_nonfinite_step, n_epochs,
//            n_examples, has_weights, weights_sha256, h5_file, h5_group,
//            wall_time_s, fingerprint_json, created_at)
//            UNIQUE (trial_id, profile, family, replica)
//   replica_stats(id, trial_id, profile_a, profile_b, family,
//            first_replica, k_a, k_b, num_classes, verdict, p_value,
//            mean_diff, diff_lcb, noise_sd, noise_floor, stats_json,
//            test_labels, created_at)
//            UNIQUE (trial_id, profile_a, profile_b, family, first_replica)
// A trial's verdict, where one is asked per trial (the query fields
// verdict, p_value, diff_lcb, noise_sd; `top --by lcb`; a search's table),
// is that of its row with the highest first_replica, the latest of those:
// a search's confirmation over fresh replicas wins over its selection.
// A replica's per-epoch curve, its per-example test predictions (uint8
// argmax, test order) and, when asked, its weights live in its own HDF5 file
// (h5/<xx>/<name>.h5, group "replica"), written atomically before the row
// that points at it commits: a process killed at any moment leaves at most
// an orphan file (fsck removes it), never a row without its data. Both
// tables are deleted with their trial.
//
// Thread-safety: as Dataset (one thread at a time per Dataset object).
#ifndef XWIRES_DATASET_REPLICAS_H_
#define XWIRES_DATASET_REPLICAS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/significance.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// One replica of one profile of a stored trial.
struct ReplicaRecord {
  int64_t id = 0;            // set when read back; ignored when storing
  int64_t trial_id = 0;
  std::string profile;       // the name of one of the trial's models
  std::string family;        // ulp | seed | order
  int64_t replica = 0;       // r >= 0; 0 is the trial as trained
  std::string params_json = "{}";  // what the perturbation changed (object)
  std::string status = "ok";       // ok | diverged (a non-finite loss)
  double test_acc = kUnknown, test_loss = kUnknown;
  int64_t first_nonfinite_step = -1;  // 1-based; -1 when every loss was finite
  std::vector<EpochMetrics> curves;   // per epoch (loaded only when asked)
  std::vector<uint8_t> predictions;   // per test example (loaded when asked)
  int64_t n_examples = 0;             // predictions' length (set on store)
  NamedTensors weights;               // stored only when not empty
  bool has_weights = false;           // read back
  std::string weights_sha256;         // of the trained weights (64 hex)
  double wall_time_s = kUnknown;
  std::string fingerprint_json;       // machine fingerprint ("" = {})
  std::string created_at;             // read back
  std::string h5_file, h5_group;      // read back
};

// The rules every stored replica satisfies (InvalidArgument naming `what`,
// the field and the value): a known family, r >= 0, a profile name, a
// params_json object, status ok|diverged with first_nonfinite_step >= 1
// exactly when diverged, test accuracy in [0, 1] (known), loss rules of a
// model (+-inf only when diverged), curves 1..E, predictions present,
// weights_sha256 64 hex digits matching the weights when both are given.
Status CheckReplica(const ReplicaRecord& r, const std::string& what);

// Checks `r` and stores it: its HDF5 file first, then its row. NotFound for
// an unknown trial or a profile the trial has no model of; AlreadyExists
// when (trial, profile, family, replica) is stored (nothing is written);
// FailedPrecondition read-only.
Result<int64_t> StoreReplica(Dataset& ds, const ReplicaRecord& r);

// Replicas of a trial (all families when `family` is ""), ordered by
// profile's model index, family, replica. With `with_data` the curves and
// predictions are read from their files (Corruption when they disagree with
// the row).
Result<std::vector<ReplicaRecord>> LoadReplicas(const Dataset& ds, int64_t trial_id,
                                                const std::string& family = "",
                                                bool with_data = false);

// The statistics of one profile pair of a trial over its replicas of one
// family (the library's outputs, core/significance.h).
struct ReplicaStatsRecord {
  int64_t id = 0;  // read back
  int64_t trial_id = 0;
  std::string profile_a, profile_b, family;
  int64_t k_a = 0, k_b = 0;
  // The replicas counted: [first_replica, first_replica + k) of each side.
  // 0 (replica 0 = the trial as trained) except for a search's confirmation
  // (hpo/schedule.h), whose fresh replicas start past the selection's (K
  // for the same family, 1 for another). A column of the row's key (schema
  // version 4); also kept in stats_json as "first_replica" when not 0.
  int64_t first_replica = 0;
  int num_classes = 0;               // of the test set
  stats::PairStatistics stats;
  std::vector<uint8_t> test_labels;  // the labels the floor was computed on
  std::string created_at;            // read back
  // noise_sd = sqrt((sd_a^2 + sd_b^2) / 2): the within-profile spread of
  // one run's accuracy.
  double NoiseSd() const;
};

// Canonical JSON object of every PairStatistics field (non-finite: null),
// and back (InvalidArgument naming the missing or mistyped key).
std::string PairStatisticsJson(const stats::PairStatistics& s);
Result<stats::PairStatistics> ParsePairStatisticsJson(const std::string& text);

// The statistics of `a` against `b` (replicas of one trial, one family,
// every one with predictions) on `labels` with `num_classes` classes:
// stats::ComparePair over accuracies, finite-loss flags and predictions in
// replica order. The replicas' family sets
// SignificanceOptions::replicas_redraw: true only when every one of them is
// `seed`, so `ulp` and `order` pairs whose replicas did not spread get
// `insufficient` (the spread guard, core/significance.h). InvalidArgument
// as ComparePair.
Result<stats::PairStatistics> ReplicaPairStatistics(const std::vector<ReplicaRecord>& a,
                                                    const std::vector<ReplicaRecord>& b,
                                                    const std::vector<uint8_t>& labels,
                                                    int num_classes);

// The statistics `s` would hold if computed now from `replicas` (stored
// replicas of its trial, any order and family): the replicas
// first_replica <= r < first_replica + k_a of profile_a (k_b of profile_b)
// in s.family, on s.test_labels.
// NotFound when one of them is missing; InvalidArgument as ComparePair.
Result<stats::PairStatistics> RecomputeReplicaStats(const ReplicaStatsRecord& s,
                                                    const std::vector<ReplicaRecord>& replicas);

// OK when recomputing `s` from `replicas` gives its verdict and every one of
// its numbers (within 1e-9 relative: builds may differ in the t quantile's
// last bits). InvalidArgument otherwise, naming `what`, the pair and the
// first field that differs with both values ("... the stored
// permutation_p is 0.0079, its replicas give 0.0317"), or the missing
// replicas.
Status CheckReplicaStats(const ReplicaStatsRecord& s, const std::vector<ReplicaRecord>& replicas,
                         const std::string& what);

// The weights stored with replica `r` (as read back by LoadReplicas; NotFound
// when it has none; Corruption when they do not match its weights_sha256).
Result<NamedTensors> LoadReplicaWeights(const Dataset& ds, const ReplicaRecord& r);

// Stores (or replaces) the statistics of (trial, profile_a, profile_b,
// family, first_replica). NotFound for an unknown trial.
Status StoreReplicaStats(Dataset& ds, const ReplicaStatsRecord& s);

// Stored statistics of `trial_id` (< 0: every trial), by trial, then
// first_replica, then id (so a trial's last row is the one that gives its
// verdict, see above);
// `stats` is read back from stats_json (Corruption when it does not parse).
Result<std::vector<ReplicaStatsRecord>> LoadReplicaStats(const Dataset& ds,
                                                         int64_t trial_id = -1);

}  // namespace xw

#endif  // XWIRES_DATASET_REPLICAS_H_
