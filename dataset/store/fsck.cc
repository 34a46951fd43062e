#include "xwires/dataset/store/fsck.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "dataset_impl.h"
#include "dataset_internal.h"
#include "dir_lock.h"
#include "fsck_search_points.h"
#include "fsck_replicas.h"
#include "h5_adapter.h"
#include "model_file.h"
#include "near_schema.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {

namespace fs = std::filesystem;

bool FsckReport::Clean() const {
  for (const auto& i : issues) {
    if (!i.repaired) return false;
  }
  return true;
}

namespace {

struct ModelRef {
  int64_t trial_id;
  int64_t model_id;
  std::string group;
  bool has_weights;
  std::string sha;
};

// SQLite's integrity_check; true if it passes.
bool CheckIntegrity(SQLite::Database& db, FsckReport& r) {
  bool ok = true;
  try {
    SQLite::Statement ic(db, "PRAGMA integrity_check(20)");
    while (ic.executeStep()) {
      std::string msg = ic.getColumn(0).getString();
      if (msg == "ok") continue;
      ok = false;
      r.issues.push_back({"sqlite-integrity", "xwires.db", 0, msg});
    }
  } catch (const SQLite::Exception& e) {  // a page it cannot even walk
    r.issues.push_back({"sqlite-integrity", "xwires.db", 0, e.what()});
    ok = false;
  }
  return ok;
}

void CheckSql(SQLite::Database& db, FsckReport& r) {
  SQLite::Statement fk(db, "PRAGMA foreign_key_check");
  while (fk.executeStep()) {
    r.issues.push_back({"foreign-key", "xwires.db", 0,
                        "table " + fk.getColumn(0).getString() + " row " +
                            std::to_string(fk.getColumn(1).getInt64()) +
                            " references missing " +
                            fk.getColumn(2).getString()});
  }
}

// The near index against the trials: a box per trial and no other, the
// bounds the trials give, no deferral left behind (near_schema.h).
void CheckNearIndex(SQLite::Database& db, FsckReport& r) {
  auto count = [&](const std::string& q) {
    return db.execAndGet(q).getInt64();
  };
  const int64_t missing = count(
      "SELECT count(*) FROM trials t WHERE NOT EXISTS (SELECT 1 FROM "
      "trials_near n WHERE n.id = t.id)");
  const int64_t extra = count(
      "SELECT count(*) FROM trials_near n WHERE NOT EXISTS (SELECT 1 FROM "
      "trials t WHERE t.id = n.id)");
  const std::string expected = near::ExpectedBoundsQuery();
  const int64_t bounds = count(
      "SELECT count(*) FROM (SELECT * FROM (" + expected +
      " EXCEPT SELECT * FROM trials_near_bounds) UNION ALL SELECT * FROM "
      "(SELECT * FROM trials_near_bounds EXCEPT " + expected + "))");
  const int64_t deferred = count("SELECT count(*) FROM trials_near_deferred");
  if (missing + extra + bounds + deferred == 0) return;
  r.issues.push_back(
      {"near-index", "xwires.db", 0,
       std::to_string(missing) + " trial(s) without a box, " +
           std::to_string(extra) + " box(es) without a trial, " +
           std::to_string(bounds) + " wrong bounds row(s), " +
           std::to_string(deferred) + " deferral(s) left"});
}

// Checks every bundle the rows point at; returns trial ids to drop and
// damaged files to quarantine. A bundle the system cannot read (EIO) is an
// error of the disk, not damage: fsck stops with it and moves nothing.
Status CheckFiles(const Dataset::Impl& impl, const FsckOptions& opt,
                FsckReport& r, std::set<int64_t>& bad_trials,
                std::set<std::string>& damaged,
                std::set<std::string>& referenced) {
  std::map<std::string, std::vector<ModelRef>> by_file;
  SQLite::Statement st(
      *impl.db,
      "SELECT trial_id, id, h5_file, h5_group, has_weights, weights_sha256 "
      "FROM models WHERE h5_file IS NOT NULL ORDER BY h5_file, id");
  while (st.executeStep()) {
    by_file[st.getColumn(2).getString()].push_back(
        {st.getColumn(0).getInt64(), st.getColumn(1).getInt64(),
         st.getColumn(3).getString(), st.getColumn(4).getInt() != 0,
         st.getColumn(5).getString()});
  }
  for (const auto& [rel, models] : by_file) {
    referenced.insert(rel);
    std::string abs = impl.Abs(rel);
    std::error_code ec;
    if (!fs::exists(abs, ec)) {
      for (const auto& m : models) bad_trials.insert(m.trial_id);
      r.issues.push_back(
          {"missing-file", rel, models[0].trial_id,
           std::to_string(models.size()) + " model(s) point at it"});
      continue;
    }
    for (const auto& m : models) {
      // Curves are read for every model: that opens the file and the group.
      Result<std::vector<EpochMetrics>> c = ReadBundleCurves(abs, m.group);
      Status s = c.status();
      if (s.ok() && m.has_weights && opt.verify_weights) {
        Result<NamedTensors> w = ReadBundleWeights(abs, m.group);
        s = w.status();
        if (s.ok() && WeightsSha256(*w) != m.sha) {
          bad_trials.insert(m.trial_id);
          r.issues.push_back(
              {"weights-mismatch", rel, m.trial_id,
               "model " + std::to_string(m.model_id) + " group " + m.group});
          continue;
        }
      }
      if (s.ok()) continue;
      XW_RETURN_IF_ERROR(h5::UnreadableOr(abs, Status::OK()));
      bad_trials.insert(m.trial_id);
      if (s.code() == Status::Code::kNotFound) {
        r.issues.push_back({"missing-group", rel, m.trial_id, s.message()});
      } else {
        damaged.insert(rel);
        for (const auto& other : models) bad_trials.insert(other.trial_id);
        r.issues.push_back({"damaged-file", rel, m.trial_id, s.message()});
        break;  // one report per damaged file is enough
      }
    }
  }
  return Status::OK();
}

void FindOrphans(const Dataset::Impl& impl,
                 const std::set<std::string>& referenced, FsckReport& r) {
  std::error_code ec;
  fs::path root = fs::path(impl.dir) / "h5";
  if (!fs::exists(root, ec)) return;
  for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
    if (!e.is_regular_file()) continue;
    ++r.files;
    std::string rel = fs::relative(e.path(), impl.dir).string();
    if (rel.find(".tmp-") != std::string::npos) {
      r.issues.push_back(
          {"temp-file", rel, 0, "leftover of an interrupted write"});
    } else if (!referenced.count(rel)) {
      r.issues.push_back({"orphan-file", rel, 0, "no model row points at it"});
    }
  }
}

// The store's value rules (trial_rules.h) on every stored trial, and the
// analysis rules (CheckAnalysis) on every stored result, as the add paths
// check them on the way in: finds rows edited by hand or stored by an older
// xwires. Curves are read only with verify_weights (they live in the HDF5
// bundles).
Status CheckValues(const Dataset& ds, const FsckOptions& opt, FsckReport& r) {
  XW_ASSIGN_OR_RETURN(auto profiles, internal::ModelProfileDefinitions(ds));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, internal::AllTrials(ds));
  for (const TrialRow& row : rows) {
    auto t =
        internal::RecordFromRow(ds, row, profiles, opt.verify_weights, false);
    if (!t.ok()) continue;  // unreadable curves are CheckFiles' finding
    Status s = CheckTrialValues(*t, "trial " + std::to_string(row.id));
    if (!s.ok()) r.issues.push_back({"invalid-value", "xwires.db", row.id, s.message()});
  }
  XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> analyses, LoadAnalyses(ds));
  for (const AnalysisRecord& a : analyses) {
    Status s = CheckAnalysis(a, "analysis " + std::to_string(a.id));
    if (s.ok()) continue;
    r.issues.push_back({"invalid-analysis", "xwires.db",
                        a.trial_ids.empty() ? 0 : a.trial_ids[0], s.message()});
  }
  return Status::OK();
}

// Moves `rel` to lost+found/ under its name (".1", ".2", ... appended when
// that name is taken: nothing there is ever replaced); returns where.
Result<std::string> Quarantine(const Dataset::Impl& impl,
                               const std::string& rel) {
  const std::string name = fs::path(rel).filename().string();
  fs::path dest = fs::path(impl.dir) / "lost+found" / name;
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  for (int n = 1; fs::exists(dest, ec); ++n)
    dest = dest.parent_path() / (name + "." + std::to_string(n));
  fs::rename(impl.Abs(rel), dest, ec);
  if (ec)
    return Status::IOError(impl.Abs(rel) +
                           ": cannot move to lost+found: " + ec.message());
  return fs::relative(dest, impl.dir).string();
}

Status Repair(Dataset::Impl& impl, const FsckOptions& opt,
              const std::set<int64_t>& bad_trials,
              const std::set<std::string>& damaged, FsckReport& r) {
  for (const FsckIssue& i : r.issues) {
    // The rows of a corrupt database cannot say which files are orphans or
    // which trials are whole: change nothing.
    if (i.kind == "sqlite-integrity") return Status::OK();
  }
  int orphans = 0;
  for (const FsckIssue& i : r.issues) orphans += i.kind == "orphan-file";
  const bool move_orphans = opt.force || orphans <= kMaxAccountedOrphans;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement del(*impl.db, "DELETE FROM trials WHERE id = ?");
    for (int64_t id : bad_trials) {
      del.reset();
      del.bind(1, id);
      del.exec();
    }
    for (FsckIssue& i : r.issues) {
      if (i.kind != "near-index") continue;
      for (const std::string& stmt : near::RebuildStatements())
        impl.db->exec(stmt);
      i.repaired = true;
    }
    tx.commit();
    return Status::OK();
  }));
  for (FsckIssue& i : r.issues) {
    if (i.kind == "temp-file") {
      std::error_code ec;
      fs::remove(impl.Abs(i.path), ec);
      i.repaired = !ec;
    } else if (i.kind == "orphan-file" && !move_orphans) {
      i.detail += " (not moved: " + std::to_string(orphans) +
                  " orphan files are more than crashed writers leave; "
                  "`fsck --repair --force` moves them to lost+found/)";
    } else if (i.kind == "orphan-file") {
      auto moved = Quarantine(impl, i.path);
      i.repaired = moved.ok();
      i.detail += moved.ok() ? "; moved to " + *moved
                             : "; " + moved.status().message();
    } else if (i.kind == "missing-file" || i.kind == "missing-group" ||
               i.kind == "weights-mismatch") {
      i.repaired = true;
    }
  }
  for (const std::string& rel : damaged) {
    auto moved = Quarantine(impl, rel);
    for (FsckIssue& i : r.issues) {
      if (i.kind != "damaged-file" || i.path != rel) continue;
      i.repaired = moved.ok();
      i.detail += moved.ok() ? "; moved to " + *moved
                             : "; " + moved.status().message();
    }
  }
  return Status::OK();
}

// One pass of every check over an open dataset.
Status CheckAll(Dataset& ds, const FsckOptions& opt, FsckReport& r,
                std::set<int64_t>& bad_trials, std::set<std::string>& damaged,
                std::set<int64_t>& bad_replicas) {
  Dataset::Impl& impl = ds.impl();
  std::set<std::string> referenced;
  // Rows that fail integrity_check cannot be trusted to name files, values
  // or points: nothing else is checked then.
  if (!CheckIntegrity(*impl.db, r)) return Status::OK();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    r.trials = impl.db->execAndGet("SELECT count(*) FROM trials").getInt64();
    r.models = impl.db->execAndGet("SELECT count(*) FROM models").getInt64();
    CheckSql(*impl.db, r);
    CheckNearIndex(*impl.db, r);
    CheckSearchPoints(*impl.db, r);
    XW_RETURN_IF_ERROR(CheckFiles(impl, opt, r, bad_trials, damaged, referenced));
    internal::CheckReplicaFiles(impl, r, referenced, bad_replicas);
    return Status::OK();
  }));
  FindOrphans(impl, referenced, r);
  XW_RETURN_IF_ERROR(CheckValues(ds, opt, r));
  return internal::CheckReplicaValues(ds, r);
}

// A repair is trusted only as far as a second check agrees: an issue it
// still finds is unrepaired, and one it finds anew is added.
Status Recheck(Dataset& ds, const FsckOptions& opt, FsckReport& r) {
  FsckReport again;
  std::set<int64_t> bad_trials;
  std::set<std::string> damaged;
  std::set<int64_t> bad_replicas;
  XW_RETURN_IF_ERROR(CheckAll(ds, opt, again, bad_trials, damaged, bad_replicas));
  auto same = [](const FsckIssue& a, const FsckIssue& b) {
    return a.kind == b.kind && a.path == b.path && a.trial_id == b.trial_id;
  };
  for (FsckIssue& i : r.issues) {
    if (!i.repaired) continue;
    for (const FsckIssue& j : again.issues) {
      if (!same(i, j)) continue;
      i.repaired = false;
      i.detail += " (still found after the repair)";
      break;
    }
  }
  for (const FsckIssue& j : again.issues) {
    bool known = false;
    for (const FsckIssue& i : r.issues) known = known || same(i, j);
    if (!known) r.issues.push_back(j);
  }
  return Status::OK();
}

}  // namespace

Result<FsckReport> Fsck(const std::string& dir, const FsckOptions& opt) {
  XW_ASSIGN_OR_RETURN(auto ds,
                      Dataset::Open(dir, opt.repair ? OpenMode::kReadWrite
                                                    : OpenMode::kReadOnly));
  Dataset::Impl& impl = ds->impl();
  std::optional<DirLock> lock;
  if (opt.repair) {
    XW_ASSIGN_OR_RETURN(DirLock l,
                        DirLock::Acquire(impl.dir, DirLock::Kind::kExclusive));
    lock.emplace(std::move(l));
  }
  FsckReport r;
  std::set<int64_t> bad_trials;
  std::set<std::string> damaged;
  std::set<int64_t> bad_replicas;
  XW_RETURN_IF_ERROR(CheckAll(*ds, opt, r, bad_trials, damaged, bad_replicas));
  if (!opt.repair) return r;
  XW_RETURN_IF_ERROR(Repair(impl, opt, bad_trials, damaged, r));
  XW_RETURN_IF_ERROR(internal::RepairReplicas(*ds, bad_replicas, r));
  XW_RETURN_IF_ERROR(Recheck(*ds, opt, r));
  return r;
}

}  // namespace xw
