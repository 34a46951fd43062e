// Reading whole small files (configs, profiles) with errors that name them.
#ifndef XWIRES_CORE_FILE_UTIL_H_
#define XWIRES_CORE_FILE_UTIL_H_

#include <string>

#include "xwires/core/status.h"

namespace xw {

// The bytes of the file at `path`. `what` names it in errors ("profile
// file"): NotFound "<what> '<path>' cannot be opened" or IOError
// "<what> '<path>': read failed". Meant for files that fit in memory.
Result<std::string> ReadWholeFile(const std::string& path, const std::string& what);

}  // namespace xw

#endif  // XWIRES_CORE_FILE_UTIL_H_
