// Contribution bundles: the manifest format and the create / verify / import
// / merge operations on a dataset.
//
// A bundle is a zstd-compressed tar (gzip accepted on read) holding
//   manifest.json   what is inside, with the SHA-256 and size of every file;
//   trials.json     the trial and model rows (hyperparameters, curves, ...);
//   weights/...     one HDF5 weights file per stored model.
// docs/contributing.md describes the format. A bundle is untrusted input:
// every reader extracts it with the safe reader (dataset/archive_io.h) into a
// private temp directory and checks it against its manifest before use.
#ifndef XWIRES_DATASET_BUNDLE_H_
#define XWIRES_DATASET_BUNDLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

// The bundle format this build writes and the newest it reads.
inline constexpr int kBundleFormatVersion = 1;
inline constexpr char kBundleFormatName[] = "xwires-bundle";
inline constexpr char kBundleManifestName[] = "manifest.json";

struct BundleFile {
  std::string
      path;  // entry name in the archive, e.g. "weights/ab12.../torch.h5"
  uint64_t bytes = 0;
  std::string sha256;  // lowercase hex
};

// manifest.json, parsed and schema-checked. JSON-valued fields hold compact
// JSON text (no JSON library type in this header).
struct BundleManifest {
  int format_version = kBundleFormatVersion;
  std::string toolkit_version;  // xwires version that wrote the bundle
  std::string created;          // UTC, "YYYY-MM-DDTHH:MM:SSZ"
  std::string contributor;      // free text, e.g. "Jane Doe <jane@example.org>"
  std::string machine_json;     // MachineFingerprintJson() of the producer
  std::map<std::string, std::string>
      profiles;                         // name -> profile definition JSON
  std::vector<std::string> data_specs;  // data specs of the trials
  uint64_t trial_count = 0;
  std::vector<BundleFile> files;  // every archive entry except manifest.json
};

}  // namespace xw

#endif  // XWIRES_DATASET_BUNDLE_H_
