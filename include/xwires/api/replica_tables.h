// The replica tables `xwires show` prints and `Dataset.replicas()` returns
// in Python: one row per stored replica, and one per profile pair's
// statistics. Read-only; thread-safety as Dataset.
#ifndef XWIRES_API_REPLICA_TABLES_H_
#define XWIRES_API_REPLICA_TABLES_H_

#include <cstdint>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/query/table.h"

namespace xw {

// Columns: profile, family, replica, status, test_acc, test_loss,
// first_nonfinite_step (null when every loss was finite), collapsed (the
// library's collapse rule, 0/1), params_json, weights_sha256, wall_s.
// Rows in the order of LoadReplicas. NotFound for an unknown trial.
Result<Table> ReplicaTable(const Dataset& ds, int64_t trial_id);

// Columns: profile_a, profile_b, family, first_replica (the row counts
// replicas first_replica..first_replica+k-1), k_a, k_b, mean_a, sd_a,
// mean_b, sd_b, collapses_a, collapses_b, mean_diff, p_value, welch_p,
// ci_low, ci_high, hedges_g, prob_a_greater, fisher_p, excess_churn,
// excess_churn_p, noise_sd, noise_floor, diff_lcb, verdict. Rows in the
// order of LoadReplicaStats: the last is the one that gives the trial's
// verdict (replicas.h).
Result<Table> ReplicaStatsTable(const Dataset& ds, int64_t trial_id);

}  // namespace xw

#endif  // XWIRES_API_REPLICA_TABLES_H_
