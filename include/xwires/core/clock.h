// Wall-clock timestamps for stored rows and reports.
#ifndef XWIRES_CORE_CLOCK_H_
#define XWIRES_CORE_CLOCK_H_

#include <string>

namespace xw {

// The current UTC time formatted by strftime `format` (at most 63 characters
// of output). The default is ISO 8601, "2026-11-21T03:04:05Z", the form every
// stored timestamp uses.
std::string UtcNow(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace xw

#endif  // XWIRES_CORE_CLOCK_H_
