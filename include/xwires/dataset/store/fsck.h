// Consistency check and repair of a dataset directory (`xwires fsck`).
//
// Finds: SQLite integrity / foreign-key errors; model rows whose HDF5 bundle is
// missing, unreadable or lacks the model's group (and, with verify_weights,
// weights whose sha256 differs); orphan bundles no row points at (a writer
// killed between rename and commit) and leftover temp files; trials whose
// values break the store's rules (accuracies outside [0, 1], hyperparameters
// out of their domain, a divergence that is not the accuracies' difference:
// "invalid-value", reported for every such trial, never repaired).
//
// Repair (under the dataset's exclusive lock, so no writer is mid-commit):
// deletes trials whose models point at missing/damaged data (one
// transaction), removes temp files, moves orphan and damaged bundles to
// DIR/lost+found/, deletes replica rows without their data and recomputes
// replica statistics from the replicas. SQLite integrity errors are reported,
// never "repaired", and while the database fails integrity_check a repair
// changes nothing at all (its rows cannot be trusted to say which files are
// orphans). Orphan files are data no row accounts for: a repair moves up to
// kMaxAccountedOrphans of them (what writers killed between their file and
// their commit leave behind); more only with `force`, each listed. After a
// repair the dataset is checked again: an issue is marked repaired only when
// the second check no longer finds it.
#ifndef XWIRES_DATASET_STORE_FSCK_H_
#define XWIRES_DATASET_STORE_FSCK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

struct FsckOptions {
  bool repair = false;
  bool verify_weights =
      false;  // read every stored weight set and check its sha256
  // With repair: move orphan files to lost+found/ even when there are more
  // than kMaxAccountedOrphans (default false: they are reported, not moved).
  bool force = false;
};

// Orphan files a repair moves without `force`.
inline constexpr int kMaxAccountedOrphans = 4;

struct FsckIssue {
  // "sqlite-integrity", "foreign-key", "missing-file",
  // "damaged-file", "missing-group", "weights-mismatch", "orphan-file",
  // "temp-file", "invalid-value", "invalid-analysis" (a stored result that
  // breaks CheckAnalysis; like invalid-value, never repaired), "near-index"
  // (the --near index disagrees with the trials; repair rebuilds it),
  // "replica-file" (a replica's HDF5 file missing or unreadable; repair
  // deletes the row, so that `xwires replicate` trains it again),
  // "invalid-replica" (a stored replica that breaks CheckReplica; never
  // repaired) and "invalid-verdict" (stored statistics, verdict or any
  // number, that their replicas do not give, or statistics over replicas
  // that are not stored; repair recomputes them from the replicas, or
  // deletes them when their replicas are gone). A replica file no row
  // points at is an "orphan-file" like any other;
  // "duplicate-point" (two trials of one search at the same point of the same
  // subspace, or completing the same pending row: two writers ran one search;
  // never repaired)
  std::string kind;
  std::string path;      // file relative to the dataset ("" for SQL issues)
  int64_t trial_id = 0;  // 0 if not about a trial
  std::string detail;
  bool repaired = false;
};

struct FsckReport {
  int64_t trials = 0, models = 0, files = 0;
  std::vector<FsckIssue> issues;
  // True if there are no issues left unrepaired.
  bool Clean() const;
};

// Errors (not issues): the dataset cannot be opened (missing, not SQLite,
// newer schema) or a repair step fails.
Result<FsckReport> Fsck(const std::string& dir, const FsckOptions& opt);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_FSCK_H_
