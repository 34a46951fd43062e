// The replicas and statistics of an AddBatch (replica_batch.h).
#include "replica_batch.h"

#include <map>
#include <set>
#include <tuple>

#include "replica_rows.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::internal {
namespace {

using Slot = std::tuple<bool, int64_t, std::string, std::string, int64_t>;

std::string TrialText(const BatchTrialRef& t) {
  return t.stored ? "stored trial " + std::to_string(t.value)
                  : "trial " + std::to_string(t.value) + " of the batch";
}

// The profiles of the referenced trial; NotFound / InvalidArgument when it
// does not exist.
Result<std::set<std::string>> Profiles(const Dataset::Impl& impl,
                                       const std::vector<TrialRecord>& trials,
                                       const BatchTrialRef& t, const std::string& what) {
  std::set<std::string> out;
  if (!t.stored) {
    if (t.value < 0 || static_cast<size_t>(t.value) >= trials.size()) {
      return Status::InvalidArgument(what + ": names trial " + std::to_string(t.value) +
                                     " of a batch of " + std::to_string(trials.size()));
    }
    for (const ModelRecord& m : trials[static_cast<size_t>(t.value)].models) {
      out.insert(m.profile);
    }
    return out;
  }
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db, "SELECT profile FROM models WHERE trial_id = ?");
    st.bind(1, t.value);
    while (st.executeStep()) out.insert(st.getColumn(0).getString());
    return Status::OK();
  }));
  if (out.empty()) {
    return Status::NotFound(what + ": trial " + std::to_string(t.value) + " is not in " +
                            impl.dir);
  }
  return out;
}

Result<bool> Stored(const Dataset::Impl& impl, const char* sql,
                    const std::vector<sql::Param>& params) {
  bool found = false;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db, sql);
    sql::BindAll(st, params);
    found = st.executeStep();
    return Status::OK();
  }));
  return found;
}

}  // namespace

Result<ReplicaPlan> PlanBatchReplicas(const Dataset::Impl& impl,
                                      const std::vector<TrialRecord>& trials,
                                      const BatchExtras& x) {
  ReplicaPlan plan;
  std::set<Slot> incoming, skipped;
  for (size_t i = 0; i < x.replicas.size(); ++i) {
    const BatchReplica& b = x.replicas[i];
    const ReplicaRecord& r = b.record;
    const std::string what = "replica " + std::to_string(i) + " (" + TrialText(b.trial) +
                             ", profile '" + r.profile + "', " + r.family + " replica " +
                             std::to_string(r.replica) + ")";
    XW_RETURN_IF_ERROR(CheckReplica(r, what));
    XW_ASSIGN_OR_RETURN(auto profiles, Profiles(impl, trials, b.trial, what));
    if (!profiles.count(r.profile)) {
      return Status::InvalidArgument(what + ": the trial has no model under profile '" +
                                     r.profile + "'");
    }
    const Slot slot{b.trial.stored, b.trial.value, r.profile, r.family, r.replica};
    if (!incoming.insert(slot).second) {
      return Status::InvalidArgument(what + ": the same replica appears twice");
    }
    if (b.trial.stored) {
      XW_ASSIGN_OR_RETURN(
          bool have, Stored(impl,
                            "SELECT 1 FROM replicas WHERE trial_id = ? AND profile = ? AND "
                            "family = ? AND replica = ?",
                            {b.trial.value, r.profile, r.family, r.replica}));
      if (have) {
        skipped.insert(slot);
        ++plan.replicas_skipped;
        continue;
      }
    }
    plan.replicas.push_back(i);
  }
  std::set<std::tuple<bool, int64_t, std::string, std::string, std::string, int64_t>> rows;
  for (size_t i = 0; i < x.replica_stats.size(); ++i) {
    const BatchReplicaStats& b = x.replica_stats[i];
    const ReplicaStatsRecord& s = b.record;
    const std::string what =
        "replica statistics " + std::to_string(i) + " (" + TrialText(b.trial) + ", " +
        s.profile_a + " vs " + s.profile_b + ", " + s.family +
        (s.first_replica != 0 ? " from replica " + std::to_string(s.first_replica) : "") + ")";
    if (!rows.insert({b.trial.stored, b.trial.value, s.profile_a, s.profile_b, s.family,
                      s.first_replica})
             .second) {
      return Status::InvalidArgument(what + ": the same statistics appear twice");
    }
    XW_ASSIGN_OR_RETURN(auto profiles, Profiles(impl, trials, b.trial, what));
    if (s.profile_a == s.profile_b || !profiles.count(s.profile_a) ||
        !profiles.count(s.profile_b)) {
      return Status::InvalidArgument(what + ": not a pair of two of the trial's profiles");
    }
    bool any_skipped = false;
    for (const auto& [profile, k] : {std::pair{s.profile_a, s.k_a}, {s.profile_b, s.k_b}}) {
      for (int64_t r = s.first_replica; r < s.first_replica + k; ++r) {
        const Slot slot{b.trial.stored, b.trial.value, profile, s.family, r};
        if (!incoming.count(slot)) {
          return Status::InvalidArgument(what + ": counts " + s.family + " replica " +
                                         std::to_string(r) + " of '" + profile +
                                         "', which is not among the replicas added with it");
        }
        any_skipped = any_skipped || skipped.count(slot) > 0;
      }
    }
    bool have = false;
    if (b.trial.stored) {
      // The row's key: a selection (first_replica 0) and a confirmation
      // over fresh replicas of the same family are two rows.
      XW_ASSIGN_OR_RETURN(have, Stored(impl,
                                       "SELECT 1 FROM replica_stats WHERE trial_id = ? AND "
                                       "profile_a = ? AND profile_b = ? AND family = ? AND "
                                       "first_replica = ?",
                                       {b.trial.value, s.profile_a, s.profile_b, s.family,
                                        s.first_replica}));
    }
    if (have || any_skipped) {
      ++plan.stats_skipped;
      continue;
    }
    plan.stats.push_back(i);
  }
  return plan;
}

std::string BatchReplicaGroup(size_t i) { return "replica/" + std::to_string(i); }

void AddReplicaGroups(const BatchExtras& x, const ReplicaPlan& plan,
                      std::vector<BundleModel>* bundle) {
  for (size_t i : plan.replicas) {
    const ReplicaRecord& r = x.replicas[i].record;
    BundleModel bm;
    bm.group = BatchReplicaGroup(i);
    bm.weights = &r.weights;
    bm.curves = &r.curves;
    bm.predictions = &r.predictions;
    bm.attrs = {{"profile", r.profile},
                {"family", r.family},
                {"replica", std::to_string(r.replica)},
                {"status", r.status}};
    bundle->push_back(std::move(bm));
  }
}

void InsertBatchReplicas(SQLite::Database& db, const BatchExtras& x, const ReplicaPlan& plan,
                         const std::vector<int64_t>& trial_ids, const std::string& file) {
  auto id = [&](const BatchTrialRef& t) {
    return t.stored ? t.value : trial_ids[static_cast<size_t>(t.value)];
  };
  for (size_t i : plan.replicas) {
    const BatchReplica& b = x.replicas[i];
    const ReplicaRecord& r = b.record;
    const std::string sha = r.weights_sha256.empty() && !r.weights.empty()
                                ? WeightsSha256(r.weights)
                                : r.weights_sha256;
    InsertReplicaRow(db, r, id(b.trial), file, BatchReplicaGroup(i), sha);
  }
  for (size_t i : plan.stats) {
    const BatchReplicaStats& b = x.replica_stats[i];
    InsertReplicaStatsRow(db, b.record, id(b.trial), /*replace=*/false);
  }
}

}  // namespace xw::internal
