// fsck of replicas and their statistics (fsck_replicas.h).
#include "fsck_replicas.h"

#include <map>

#include "model_file.h"
#include "replica_rows.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::internal {
namespace {

std::string TrialText(int64_t trial) { return "trial " + std::to_string(trial); }

// Trials with replicas or statistics.
Result<std::set<int64_t>> ReplicatedTrials(const Dataset& ds) {
  std::set<int64_t> trials;
  XW_RETURN_IF_ERROR(sql::Guarded(ds.impl().DbPath(), [&]() -> Status {
    SQLite::Statement st(*ds.impl().db,
                         "SELECT trial_id FROM replicas UNION SELECT trial_id FROM replica_stats");
    while (st.executeStep()) trials.insert(st.getColumn(0).getInt64());
    return Status::OK();
  }));
  return trials;
}

}  // namespace

void CheckReplicaFiles(const Dataset::Impl& impl, FsckReport& r,
                       std::set<std::string>& referenced, std::set<int64_t>& bad_rows) {
  SQLite::Statement st(*impl.db,
                       "SELECT trial_id, id, h5_file, h5_group FROM replicas ORDER BY id");
  while (st.executeStep()) {
    const std::string rel = st.getColumn(2).getString();
    referenced.insert(rel);
    auto p = ReadBundlePredictions(impl.Abs(rel), st.getColumn(3).getString());
    if (p.ok()) continue;
    bad_rows.insert(st.getColumn(1).getInt64());
    r.issues.push_back({"replica-file", rel, st.getColumn(0).getInt64(),
                        "replica " + std::to_string(st.getColumn(1).getInt64()) + ": " +
                            p.status().message()});
  }
}

Status CheckReplicaValues(const Dataset& ds, FsckReport& r) {
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> all, LoadReplicaStats(ds));
  XW_ASSIGN_OR_RETURN(std::set<int64_t> trials, ReplicatedTrials(ds));
  for (int64_t trial : trials) {
    auto reps = LoadReplicas(ds, trial, "", /*with_data=*/true);
    if (!reps.ok()) continue;  // unreadable files are CheckReplicaFiles' finding
    for (const ReplicaRecord& x : *reps) {
      Status s = CheckReplica(x, TrialText(trial) + " replica " + std::to_string(x.replica) +
                                     " of '" + x.profile + "' (" + x.family + ")");
      if (!s.ok()) r.issues.push_back({"invalid-replica", "xwires.db", trial, s.message()});
    }
    for (const ReplicaStatsRecord& s : all) {
      if (s.trial_id != trial) continue;
      Status ok = CheckReplicaStats(s, *reps, TrialText(trial));
      if (!ok.ok()) r.issues.push_back({"invalid-verdict", "xwires.db", trial, ok.message()});
    }
  }
  return Status::OK();
}

Status RepairReplicas(Dataset& ds, const std::set<int64_t>& bad_rows, FsckReport& r) {
  Dataset::Impl& impl = ds.impl();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement del(*impl.db, "DELETE FROM replicas WHERE id = ?");
    for (int64_t id : bad_rows) {
      del.reset();
      del.bind(1, id);
      del.exec();
    }
    tx.commit();
    return Status::OK();
  }));
  for (FsckIssue& i : r.issues) {
    if (i.kind == "replica-file") i.repaired = true;
  }
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> all, LoadReplicaStats(ds));
  std::map<int64_t, std::vector<ReplicaRecord>> reps;
  std::set<int64_t> unfixed;  // trials whose statistics stay unchecked
  std::vector<ReplicaStatsRecord> replace;
  std::vector<int64_t> remove;
  for (ReplicaStatsRecord& s : all) {
    if (!reps.count(s.trial_id)) {
      auto loaded = LoadReplicas(ds, s.trial_id, "", /*with_data=*/true);
      if (!loaded.ok()) {
        unfixed.insert(s.trial_id);
        continue;
      }
      reps[s.trial_id] = std::move(*loaded);
    }
    if (CheckReplicaStats(s, reps[s.trial_id], "").ok()) continue;
    auto again = RecomputeReplicaStats(s, reps[s.trial_id]);
    if (again.ok()) {
      s.stats = *again;
      replace.push_back(s);
    } else if (again.status().code() == Status::Code::kNotFound) {
      remove.push_back(s.id);
    } else {
      unfixed.insert(s.trial_id);
    }
  }
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    for (const ReplicaStatsRecord& s : replace) {
      InsertReplicaStatsRow(*impl.db, s, s.trial_id, /*replace=*/true);
    }
    SQLite::Statement del(*impl.db, "DELETE FROM replica_stats WHERE id = ?");
    for (int64_t id : remove) {
      del.reset();
      del.bind(1, id);
      del.exec();
    }
    tx.commit();
    return Status::OK();
  }));
  for (FsckIssue& i : r.issues) {
    if (i.kind == "invalid-verdict" && !unfixed.count(i.trial_id)) i.repaired = true;
  }
  return Status::OK();
}

}  // namespace xw::internal
