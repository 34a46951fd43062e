// Files a command writes next to its results (`xwires train --out`,
// `xwires report -o`, the Python package): atomic writes and output
// directories that are checked before any work starts.
//
// Plain functions; thread-safe for distinct paths.
#ifndef XWIRES_API_OUTPUT_FILES_H_
#define XWIRES_API_OUTPUT_FILES_H_

#include <string>

#include "xwires/core/status.h"

namespace xw {

// A profile name as a file name: characters outside [A-Za-z0-9._-] become '_'.
std::string SafeFileName(const std::string& name);

// Creates `dir` (and parents) if needed and checks that files can be created
// in it. Writes nothing that stays behind. Errors name "--out <dir>".
Status PrepareOutputDir(const std::string& dir);

// Writes `text` to `path` through a temp file, fsync and rename, so readers
// see the old file or the whole new one.
Status WriteFileAtomic(const std::string& path, const std::string& text);

}  // namespace xw

#endif  // XWIRES_API_OUTPUT_FILES_H_
