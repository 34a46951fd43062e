// Summary statistics of a dataset, as in the CrossedWires study:
//   - Tables 2 and 3: per group (architecture by default) the min / max /
//     median / mean divergence, the share of trials whose divergence is at
//     least a threshold (0.05), and each profile's min / max test accuracy;
//   - Tables 4-6: the k most (or least) divergent trials of each
//     architecture with their hyperparameters and accuracies.
// Trials with unknown divergence are counted in `trials` but not in the
// divergence statistics. Read-only; thread-safety as Dataset.
#ifndef XWIRES_DATASET_QUERY_STATS_H_
#define XWIRES_DATASET_QUERY_STATS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

struct ProfileAccuracy {
  std::string profile;
  int64_t n = 0;  // models with a known test accuracy
  double min_acc = kUnknown, max_acc = kUnknown, mean_acc = kUnknown;
};

struct GroupStats {
  std::string group;   // the group's value (or "all")
  int64_t trials = 0;  // trials in the group
  int64_t with_divergence = 0;
  double div_min = kUnknown, div_max = kUnknown, div_median = kUnknown,
         div_mean = kUnknown;
  int64_t at_least_threshold = 0;    // trials with divergence >= threshold
  double share_at_least = kUnknown;  // at_least_threshold / with_divergence
  std::vector<ProfileAccuracy> profiles;  // sorted by name
  // Trials with replica statistics (replicas.h; the latest pair of each),
  // those whose verdict is significant, and their share (NaN without any).
  int64_t replicated = 0, significant = 0;
  double significant_share = kUnknown;
};

struct StatsOptions {
  // "none" (one group) or any field of the query language (query.h): arch,
  // data, width, train_limit, search_id, profiles, simd_<profile>, ... A
  // trial without the value is in group "(none)".
  std::string by = "arch";
  double threshold = 0.05;
  bool add_overall = true;  // append an "all" row when grouping
  TrialQuery filter;  // which trials (where/archs/...; order/limit ignored)
};

Result<std::vector<GroupStats>> ComputeStats(const Dataset& ds,
                                             const StatsOptions& opt);
// Columns: group, trials, div_min, div_max, div_median, div_mean,
// share_ge_<threshold>, then acc_min_<p>, acc_max_<p> per profile, then,
// when any trial has replica statistics, replicated and significant_share.
Table StatsTable(const std::vector<GroupStats>& stats, const StatsOptions& opt);

struct TopOptions {
  int k = 3;
  bool bottom = false;  // least divergent instead of most
  TrialQuery filter;
};
// (arch, its k trials ordered by divergence), architectures sorted by name.
Result<std::vector<std::pair<std::string, std::vector<TrialRow>>>> TopTrials(
    const Dataset& ds, const TopOptions& opt);
// Columns: arch, rank, id, name, lr, adam_eps, batch_size, epochs,
// acc_<p> per profile, diff, collapsed, at_chance (1, 0 or empty when
// unknown; degenerate.h).
Table TopTable(
    const std::vector<std::pair<std::string, std::vector<TrialRow>>>& top);

// One row per trial: id, arch, name, status, hyperparameters, acc_<p> per
// profile (the profiles in `rows`, sorted), diff, collapsed, at_chance.
// Used by query and export.
Table TrialsTable(const std::vector<TrialRow>& rows);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_STATS_H_
