// Integer command-line options parsed strictly: CLI11's own conversion goes
// through strtoll/strtoull, which saturates on overflow (99999999999999999999
// becomes 9223372036854775807), wraps negative values into unsigned ones
// (-1 becomes 18446744073709551615) and reads "010" as octal. These options
// accept only a base-10 integer within [lo, hi]; anything else is refused
// while the command line is parsed, before the command does any work, with
// InvalidArgument (exit 2) naming the option, the value and the range.
#ifndef XWIRES_API_CLI_INT_OPTION_H_
#define XWIRES_API_CLI_INT_OPTION_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "xwires/core/status.h"

namespace xw::cli {

inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kIntMin = std::numeric_limits<int>::min();
inline constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// The value of `text` as a base-10 integer in [lo, hi] ("-" sign allowed,
// no "+", spaces, prefixes or trailing text); InvalidArgument naming
// `option` otherwise.
Result<int64_t> ParseIntOption(const std::string& option, const std::string& text,
                               int64_t lo, int64_t hi);

// Adds option `name` storing into `*out` (which keeps its value when the
// option is absent and gives the default shown in --help). The bounds must
// fit T. `*out` must outlive the parse.
CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, int64_t* out, int64_t lo,
                          int64_t hi, const std::string& help);
CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, int* out, int64_t lo,
                          int64_t hi, const std::string& help);
CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, uint64_t* out, int64_t lo,
                          int64_t hi, const std::string& help);
CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name,
                          std::optional<int64_t>* out, int64_t lo, int64_t hi,
                          const std::string& help);

}  // namespace xw::cli

#endif  // XWIRES_API_CLI_INT_OPTION_H_
