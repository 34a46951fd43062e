// trials.json of a bundle and the content hash of a trial.
//
// trials.json is a JSON array; element k describes trial k:
//   {"content_sha256": hex, "provenance": str, "in_search": bool,
//    "arch": str, "data_spec": str, "hparams": {...}, "extra": {...},
//    "lr"|"adam_eps"|"beta1"|"beta2"|"weight_decay"|"divergence": real,
//    "batch_size"|"epochs": int or null, "seed": int or null (unknown,
//    e.g. imported results), "external_id": str,
//    "id": int >= 1, the trial's id in the dataset the bundle was made
//    from (format >= 3; absent before),
//    "models": [{"profile": str, "external": bool, "status": str,
//                "train_acc"|"test_acc"|"train_loss"|"test_loss"|
//                "wall_time_s": real, "param_count": int, "threads": int,
//                "fingerprint": {...}, "weights_sha256": str,
//                "weights_file": "weights/<k>/<j>.h5" or null,
//                "curves": [{"epoch": int, "train_loss_mean"|
//                            "train_loss_last"|"train_acc"|"test_loss"|
//                            "test_acc": real}, ...]}, ...]}
// where a real is a number, null (unknown) or "inf"/"-inf". Profile
// definitions live in the manifest ("profiles"), once per name.
//
// The content hash is SHA-256 over the compact, key-sorted JSON of the same
// object without content_sha256, provenance, in_search, id and weights_file, and
// with each model's profile definition (parsed; null for external profiles)
// under "profile_definition". Thread-safe.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_TRIALS_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_TRIALS_H_

#include <string>
#include <string_view>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/run_record.h"

namespace xw::bundle {

// One trial of a bundle. `record` carries no weights; models that have them
// name their archive entry in `weights_files` (same order as models; "" for
// none) and their hash in weights_sha256.
struct BundleTrial {
  TrialRecord record;
  std::vector<std::string> weights_files;
  bool in_search = false;
  std::string content_sha256;
  int64_t source_id = 0;  // "id" (0: a format 1-2 bundle, which has none)
};

// Content hash without the curves: a cheap first key to find candidate
// duplicates before loading curves (equal content => equal key).
std::string TrialKeySha256(const TrialRecord& trial);

// trials.json text (one trial per line) for `trials`.
Result<std::string> TrialsToJson(const std::vector<BundleTrial>& trials);

// Parses untrusted trials.json against the manifest: schema, limits (at most
// 256 MiB, 64 models per trial, 100000 epochs per curve), profile names with
// definitions in the manifest (non-external) or none (external), data specs
// listed in the manifest, weights files listed in the manifest and used once,
// and each content_sha256 recomputed. Errors name "trials.json", the trial
// index and the field.
Result<std::vector<BundleTrial>> ParseTrialsJson(
    std::string_view text, const BundleManifest& manifest);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_TRIALS_H_
