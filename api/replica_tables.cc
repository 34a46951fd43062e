#include "xwires/api/replica_tables.h"

#include <string>

#include "xwires/dataset/store/replicas.h"

namespace xw {

Result<Table> ReplicaTable(const Dataset& ds, int64_t trial_id) {
  XW_ASSIGN_OR_RETURN(TrialRow trial, ds.GetTrial(trial_id));
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> rs, LoadReplicas(ds, trial_id));
  // The collapse rule needs the test set's size and classes: the stored
  // statistics carry them.
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> st, LoadReplicaStats(ds, trial_id));
  const int classes = st.empty() ? 0 : st.front().num_classes;
  Table t;
  t.columns = {"profile", "family", "replica", "status", "test_acc", "test_loss",
               "first_nonfinite_step", "collapsed", "params_json", "weights_sha256", "wall_s"};
  for (const ReplicaRecord& r : rs) {
    Cell collapsed;
    if (classes >= 2 && r.n_examples > 0) {
      collapsed = int64_t{stats::IsCollapsed(r.test_acc, r.status == "ok", classes,
                                             r.n_examples)};
    }
    t.rows.push_back({r.profile, r.family, r.replica, r.status, r.test_acc, r.test_loss,
                      r.first_nonfinite_step > 0 ? Cell{r.first_nonfinite_step} : Cell{},
                      collapsed, r.params_json, r.weights_sha256, r.wall_time_s});
  }
  return t;
}

Result<Table> ReplicaStatsTable(const Dataset& ds, int64_t trial_id) {
  XW_ASSIGN_OR_RETURN(TrialRow trial, ds.GetTrial(trial_id));
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> st, LoadReplicaStats(ds, trial_id));
  Table t;
  t.columns = {"profile_a", "profile_b",   "family",       "first_replica", "k_a", "k_b",
               "mean_a",    "sd_a",        "mean_b",       "sd_b",         "collapses_a",
               "collapses_b", "mean_diff", "p_value",      "welch_p",      "ci_low",
               "ci_high",   "hedges_g",    "prob_a_greater", "fisher_p",   "excess_churn",
               "excess_churn_p", "noise_sd", "noise_floor", "diff_lcb",    "verdict"};
  for (const ReplicaStatsRecord& r : st) {
    const stats::PairStatistics& s = r.stats;
    t.rows.push_back({r.profile_a, r.profile_b, r.family, r.first_replica, r.k_a, r.k_b,
                      s.a.mean, s.a.sd,
                      s.b.mean, s.b.sd, int64_t{s.a.collapses}, int64_t{s.b.collapses},
                      s.mean_diff, s.permutation_p, s.welch_p, s.ci_low, s.ci_high, s.hedges_g,
                      s.prob_a_greater, s.fisher_p, s.excess_churn, s.excess_churn_p,
                      r.NoiseSd(), s.floor, s.lcb, std::string(stats::VerdictName(s.verdict))});
  }
  return t;
}

}  // namespace xw
