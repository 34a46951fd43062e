// manifest.json of a bundle: strict parsing of untrusted text, writing, and
// the check of an extracted archive against its manifest.
//
// The parser rejects, naming the field or position at fault: text larger than
// `max_bytes`, nesting deeper than `max_depth`, invalid JSON, duplicate object
// keys, a missing field, a field of the wrong type, an unknown field, a
// different format name, and (with kNotSupported) a format version newer than
// kBundleFormatVersion. All functions are thread-safe.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_MANIFEST_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_MANIFEST_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "archive_io.h"
#include "bundle_json.h"
#include "xwires/core/status.h"
#include "xwires/dataset/bundle/bundle.h"

namespace xw::bundle {

// Defaults: 16 MiB of text, 16 levels of nesting, 64 KiB per string.
using ManifestLimits = JsonLimits;

Result<BundleManifest> ParseManifest(std::string_view text,
                                     const ManifestLimits& limits = {});

// Key-sorted JSON (indented) that ParseManifest accepts back unchanged;
// InvalidArgument if a JSON-valued field does not hold JSON.
Result<std::string> ManifestToJson(const BundleManifest& m);

// Checks that the archive holds exactly manifest.json plus the manifest's
// files, with the listed sizes and SHA-256. Errors name the file.
Status CheckFilesAgainstManifest(const BundleManifest& m,
                                 const ExtractedArchive& archive);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_MANIFEST_H_
