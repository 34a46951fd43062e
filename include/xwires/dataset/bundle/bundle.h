// Contribution bundles: the manifest format and the create / verify / import
// / merge operations on a dataset (docs/contributing.md). The bundle part
// (dataset/bundle/, target xwires_dataset_bundle) is the only part of the
// dataset that reads untrusted bytes.
//
// A bundle is a zstd-compressed tar (gzip accepted on read) holding exactly
//   manifest.json            format, versions, producer fingerprint, profile
//                            definitions, data specs, search, trial count and
//                            the size and SHA-256 of every other file;
//   trials.json              the trial and model rows (hyperparameters,
//                            metrics, curves, weights_sha256, content hash);
//   analyses.json            (format 2) the stored compare / attribute / mi
//                            results whose trials are all in the bundle;
//   weights/<t>/<m>.h5       weights of model m of trial t (tensor_file.h);
//   replicas.json            (format 3) the trials' replicas and the
//                            statistics over them (replicas.h);
//   replicas/<t>/<i>.h5      curve, test predictions and (when stored)
//                            weights of replica i of trial t.
// Readers accept format versions 1 (no analyses.json), 2 (no replicas.json)
// and 3, and reject newer ones ("... is newer than this xwires reads ...; upgrade xwires").
// A bundle is untrusted input: it is extracted with the safe reader
// (dataset/bundle/archive_io.h) into a private temp directory and checked
// against its manifest and schemas before anything reaches a dataset; every
// failure names the file, entry or field at fault and leaves the dataset
// unchanged.
//
// Layering: this module knows nothing of training. Checks that need the
// trainer or the search module (profile definitions, hyperparameters inside
// the search space, replay) are passed in as BundleCheckers by the caller
// (the CLI does). Functions are safe to call from several threads on
// distinct Dataset objects.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// The bundle format this build writes and the newest it reads.
inline constexpr int kBundleFormatVersion = 3;
inline constexpr char kBundleFormatName[] = "xwires-bundle";
inline constexpr char kBundleManifestName[] = "manifest.json";
inline constexpr char kBundleTrialsName[] = "trials.json";
inline constexpr char kBundleAnalysesName[] = "analyses.json";  // format >= 2
inline constexpr char kBundleReplicasName[] = "replicas.json";  // format >= 3

struct BundleFile {
  std::string path;  // entry name in the archive, e.g. "weights/0/1.h5"
  uint64_t bytes = 0;
  std::string sha256;  // lowercase hex
};

// manifest.json, parsed and schema-checked. JSON-valued fields hold compact,
// key-sorted JSON text (no JSON library type in this header).
struct BundleManifest {
  int format_version = kBundleFormatVersion;
  std::string toolkit_version;  // xwires version that wrote the bundle
  std::string created;          // UTC, "YYYY-MM-DDTHH:MM:SSZ"
  std::string contributor;      // free text, e.g. "Jane Doe <jane@example.org>"
  std::string machine_json;     // MachineFingerprintJson() of the producer
  std::map<std::string, std::string>
      profiles;                         // name -> definition (JSON object)
  std::vector<std::string> data_specs;  // distinct data specs of the trials
  // The search the trials came from (`bundle create --search`), if any.
  std::optional<SearchRecord> search;
  uint64_t trial_count = 0;
  std::vector<BundleFile> files;  // every archive entry except manifest.json
};

// Checks the module cannot do itself; each may be left empty (skipped, and
// reported as skipped by VerifyBundle).
struct BundleCheckers {
  // Validates a profile definition (JSON text) as the trainer would load it.
  std::function<Status(const std::string& name, const std::string& json)>
      profile;
  // Validates a trial's hyperparameters against the bundle's search.
  std::function<Status(const SearchRecord& search, const TrialRecord& trial)>
      search_space;
  // Re-trains `trial` (same arch, data, hyperparameters, seed and profile
  // definitions) and returns the fresh record, models in the same order.
  std::function<Result<TrialRecord>(const TrialRecord& trial)> retrain;
  // True when a profile definition's kernels give the same bits on every ISA
  // and SIMD target (exact-order kernels): replay then compares its weights
  // bitwise even when the producer's "isa" or "kernel_target" differ. Empty
  // or false: bitwise only on the producer's ISA and kernel target.
  std::function<bool(const std::string& profile_json)> same_bits_on_every_isa;
  // Re-trains `replica` of `trial` (the same family and index, the trial's
  // data and hyperparameters, the profile's definition from its model) and
  // returns the fresh replica (test_acc, weights_sha256, ...). Empty: replicas
  // are not replayed.
  std::function<Result<ReplicaRecord>(const TrialRecord& trial,
                                      const ReplicaRecord& replica)>
      retrain_replica;
};

// Limits on what a bundle may decompress to (zip-bomb and resource guards).
struct BundleLimits {
  uint64_t max_file_bytes = uint64_t{1} << 30;   // any one file
  uint64_t max_total_bytes = uint64_t{8} << 30;  // all files
  size_t max_entries = 50000;
};

struct BundleCreateOptions {
  std::string contributor;  // recorded in the manifest; no control characters
  int threads = 0;          // recorded in the producer fingerprint
};

struct BundleCreateResult {
  int64_t trials = 0;
  uint64_t bytes = 0;
  std::string sha256;  // of the archive: the bundle's name in provenance
};

// Writes the trials of search `search_id`, or the listed `trial_ids` (in that
// order), with their weights and curves to `out` (a .tar.zst; written to a
// temp name and renamed, so a failure leaves no partial file). Errors:
// NotFound (no such search/trial), InvalidArgument (nothing selected, a
// profile name with two different definitions, control characters in
// `contributor`), Corruption (stored weights not matching their sha256).
Result<BundleCreateResult> CreateBundle(
    const Dataset& ds, std::optional<int64_t> search_id,
    const std::vector<int64_t>& trial_ids, const std::string& out,
    const BundleCreateOptions& options = {});

struct BundleVerifyOptions {
  int replay = 0;            // K trials to re-train (0: none)
  // Replicas re-trained per replayed trial that has replicas (drawn with
  // the trials' seed among its replicas r >= 1; replica 0 is the trial
  // itself); -1: all of them.
  int replica_replays = 1;
  uint64_t replay_seed = 0;  // seeds the draw of which trials
  // Used when bitwise comparison is not possible: |test_acc - replayed| must
  // not exceed this (accuracies are in [0, 1]).
  double accuracy_tolerance = 0.02;
  std::string temp_dir;  // extraction parent; "" = system temp dir
  BundleLimits limits;
  std::function<void(const std::string&)> log;  // one line per check done
};

struct ReplayOutcome {
  int64_t trial_index = 0;  // 0-based position in trials.json
  std::string profile;
  std::string replica;      // "" for the trial's model; "<family> <r>"
  // "bitwise" (weights_sha256 compared: same profile, ISA, toolkit and Eigen
  // as the producer) or "accuracy" (test accuracy within the tolerance).
  std::string method;
  bool passed = false;
  std::string detail;  // e.g. "weights_sha256 3fa2... == 3fa2..."
};

struct BundleReport {
  BundleManifest manifest;
  std::string bundle_sha256;
  int64_t trials = 0;
  int64_t models_with_weights = 0;
  int64_t analyses = 0;             // results in analyses.json
  int64_t replicas = 0;             // replicas in replicas.json
  int64_t replica_stats = 0;        // statistics rows in replicas.json
  std::vector<std::string> checks;  // what was verified, in order
  std::vector<ReplayOutcome> replays;
  bool replay_passed() const;  // true when no replay failed
};

// Every check short of touching a dataset: archive safety, manifest schema
// and version, file set and checksums, trials.json schema, content hashes,
// weights against weights_sha256, profiles and data specs against the
// manifest, the caller's profile and search-space checkers, replicas
// (format 3: each file's checksum, its curve, predictions and weights
// against its row and the store's rules) and their statistics (recomputed
// from the replicas: the stored verdict and numbers must be what they give),
// and with options.replay > 0 a replay of that many trials and of
// options.replica_replays replicas of each. Static failures return
// their Status; replay results are in the report (replay_passed()).
Result<BundleReport> VerifyBundle(const std::string& bundle,
                                  const BundleCheckers& checkers,
                                  const BundleVerifyOptions& options = {});

struct BundleImportReport {
  int64_t added = 0;
  int64_t skipped = 0;             // already present (same content hash)
  int64_t analyses_added = 0;
  int64_t analyses_skipped = 0;    // already present (equal result)
  int64_t searches_added = 0;
  int64_t replicas_added = 0, replicas_skipped = 0;  // skipped: already stored
  int64_t replica_stats_added = 0, replica_stats_skipped = 0;
  std::vector<int64_t> trial_ids;  // ids of the added trials
  std::string provenance;          // description recorded for the added trials
};

// Verifies `bundle` (as VerifyBundle without replay) and adds its trials,
// its search and its analyses to `ds` (opened read-write) in one
// all-or-nothing transaction. Trials whose content hash equals a stored
// trial's are skipped and counted; analyses describe the added or the
// matching stored trials, and one equal to a stored result is skipped.
// Provenance of the added trials: "bundle sha256:<hash> imported <date>
// contributor '<contributor>'" plus "; origin: <original provenance>" when
// there was one. The bundle's search, if any, is added (or an identical
// stored search is reused) and set as the trials' search_id. Replicas and
// statistics are stored with their trials (ids remapped); those already
// stored for a skipped trial are skipped (BatchExtras in
// dataset/store/dataset_internal.h).
struct BundleImportOptions {
  std::string temp_dir;  // extraction parent; "" = system temp dir
  BundleLimits limits;
  std::function<void(const std::string&)> log;  // one line per check done
};
Result<BundleImportReport> ImportBundle(
    Dataset& ds, const std::string& bundle, const BundleCheckers& checkers,
    const BundleImportOptions& options = {});

// Adds every trial of `other` not already in `ds` (by content hash), with
// weights, curves, searches, analyses, replicas and their statistics, in one
// all-or-nothing transaction. Statistics are recomputed from `other`'s
// replicas first: a stored verdict they do not give refuses the merge.
// Provenance: "merged from <other dir> <date>" plus the origin as above.
Result<BundleImportReport> MergeDatasets(Dataset& ds, const Dataset& other);

// SHA-256 of a trial's content: everything the trial records except where
// and when it was stored (id, created_at, provenance, search id, file
// locations). Equal for a trial and its imported copy.
std::string TrialContentSha256(const TrialRecord& trial);

}  // namespace xw

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_H_
