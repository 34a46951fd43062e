// xw::Dataset: the living dataset, a directory holding
//   DIR/xwires.db          SQLite (WAL mode): searches, trials, models,
//                          profiles, provenance, schema_version
//   DIR/xwires.lock        advisory lock: writers share it, `fsck --repair`
//                          takes it exclusively
//   DIR/h5/<xx>/<id>.h5    HDF5 bundles with the weights and curves of the
//                          models added by one AddTrial(s) call
//   DIR/lost+found/        files quarantined by `fsck --repair`
// (full format: docs/dataset.md).
//
// Writes are atomic: the HDF5 bundle is written to a temp file, fsync'ed and
// renamed before the SQL rows that point at it commit in one transaction, so
// a process killed at any moment leaves at most an orphan file (fsck removes
// it), never a row pointing at a missing or partial file. Several processes
// may add trials to one dataset concurrently (WAL + busy timeout).
//
// Thread-safety: a Dataset object owns one SQLite connection and must be used
// by one thread at a time; open one per thread or process.
#ifndef XWIRES_DATASET_STORE_DATASET_H_
#define XWIRES_DATASET_STORE_DATASET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// The arguments of Query, Count and Near belong to the query side
// (xwires/dataset/query/query.h), which depends on the store, never the other
// way round; callers of those three include query.h. The store's own code
// never calls them.
struct TrialQuery;
struct NearTarget;

// Schema version this build writes; datasets of a newer version are refused.
inline constexpr int kDatasetSchemaVersion = 4;

enum class OpenMode {
  kReadOnly,   // never creates or modifies files; refuses writes
  kReadWrite,  // the dataset must exist; migrates an older schema
  kCreate,     // creates DIR and an empty dataset if missing
};

// A model as stored (one row of `models`).
struct ModelRow {
  int64_t id = 0;
  int64_t trial_id = 0;
  std::string profile;
  bool external = false;
  std::string status;  // ok | diverged | failed | incomplete
  double train_acc = kUnknown, test_acc = kUnknown;
  double train_loss = kUnknown, test_loss = kUnknown;
  int64_t n_epochs = 0;  // length of the stored curves
  bool has_weights = false;
  std::string weights_sha256;
  int64_t param_count = 0;
  double wall_time_s = kUnknown;
  std::string fingerprint_json;
  int threads = 0;
  std::string h5_file;   // relative to the dataset directory; "" if none
  std::string h5_group;  // group inside h5_file holding tensors and "curves"
};

// A trial as stored, with its models in insertion order.
struct TrialRow {
  int64_t id = 0;
  std::string created_at;  // UTC, ISO 8601
  std::string arch, data_spec, status, external_id, provenance;
  double lr = kUnknown, adam_eps = kUnknown, beta1 = kUnknown, beta2 = kUnknown;
  double weight_decay = kUnknown, divergence = kUnknown;
  std::optional<int64_t> batch_size, epochs, seed, search_id;
  std::string hparams_json, extra_json;
  std::vector<ModelRow> models;

  // The model trained under `profile`, or nullptr.
  const ModelRow* Model(const std::string& profile) const;
};

struct SearchRecord {
  std::string config_json = "{}";  // the full search configuration
  std::string space_json = "{}";   // the hyperparameter space searched
  std::string objective;           // e.g. "divergence(torch,tf)"
  std::string status = "running";  // running | done | failed | stopped
};

struct SearchRow {
  int64_t id = 0;
  std::string created_at;
  SearchRecord record;
};

// Result of Near(): a trial and its distance in normalised space.
struct NearRow {
  double distance = 0;
  TrialRow trial;
};

class Dataset {
 public:
  // Opens (or with kCreate creates) the dataset in `dir`. Errors name the
  // path: NotFound (no dataset), Corruption (xwires.db not SQLite, truncated
  // or inconsistent), NotSupported (written by a newer schema version),
  // InvalidArgument (kCreate on a non-empty directory without xwires.db).
  static Result<std::unique_ptr<Dataset>> Open(
      const std::string& dir, OpenMode mode = OpenMode::kReadOnly);
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::string& dir() const;
  bool read_only() const;
  int schema_version() const;

  // Stores one trial (weights and curves to HDF5, then SQL) and returns its id.
  // InvalidArgument for bad records (empty arch, duplicate or malformed
  // profile names, unknown status, invalid JSON, sha256 mismatch).
  Result<int64_t> AddTrial(const TrialRecord& trial);
  // Stores all trials or none: one HDF5 bundle (if any model has weights or
  // curves) and one transaction. Returns the ids in input order.
  Result<std::vector<int64_t>> AddTrials(
      const std::vector<TrialRecord>& trials);

  Result<int64_t> AddSearch(const SearchRecord& search);
  Status SetSearchStatus(int64_t search_id, const std::string& status);
  Result<std::vector<SearchRow>> Searches() const;

  // Trials matching `q` (filter, ranges, order, limit), models included.
  // Query, Count and Near are implemented by dataset/query/.
  Result<std::vector<TrialRow>> Query(const TrialQuery& q) const;
  Result<int64_t> Count(const TrialQuery& q) const;
  // The `q.limit` (default 10) trials nearest to `target` among those
  // matching `q`'s filters; see query.h for the metric.
  Result<std::vector<NearRow>> Near(const NearTarget& target,
                                    const TrialQuery& q) const;

  Result<TrialRow> GetTrial(int64_t trial_id) const;
  // Weights of a stored model in canonical order (NotFound if it has none);
  // the sha256 recorded at insert is verified (Corruption on mismatch).
  Result<NamedTensors> LoadWeights(int64_t model_id) const;
  Result<std::vector<EpochMetrics>> LoadCurves(int64_t model_id) const;
  // Profile names used by stored models, sorted.
  Result<std::vector<std::string>> ProfileNames() const;

  // Internal state shared by the dataset's .cc files
  // (dataset/store/dataset_impl.h).
  class Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit Dataset(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_DATASET_H_
