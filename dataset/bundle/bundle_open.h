// Opening an untrusted bundle: every static check of VerifyBundle, shared by
// verify and import. Nothing here touches a dataset.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_OPEN_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_OPEN_H_

#include <functional>
#include <string>
#include <vector>

#include "archive_io.h"
#include "bundle_analyses.h"
#include "bundle_replicas.h"
#include "bundle_trials.h"
#include "xwires/core/status.h"
#include "xwires/dataset/bundle/bundle.h"

namespace xw::bundle {

struct OpenedBundle {
  ExtractedArchive archive;  // owns the private extraction directory
  BundleManifest manifest;
  std::vector<BundleTrial> trials;
  std::vector<BundleAnalysis> analyses;  // format 2; none in format 1
  BundleReplicas replicas;  // format 3 (curves and predictions read from
                            // their files); none before
  std::string sha256;               // of the archive file
  std::vector<std::string> checks;  // what was verified, in order
};

struct OpenOptions {
  std::string temp_dir;       // "" = system temp directory
  bool keep_weights = false;  // fill the records' (and replicas') weights
  BundleLimits limits;
  std::function<void(const std::string&)> log;
};

// Extracts and checks `path` (see VerifyBundle in bundle.h for the list).
// Errors are prefixed with the bundle path.
Result<OpenedBundle> OpenBundle(const std::string& path,
                                const BundleCheckers& checkers,
                                const OpenOptions& options);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_OPEN_H_
