// The `xwires` command line: subcommand registration and the error boundary.
//
// Each cmd_*.cc file registers its subcommands with XW_CLI_COMMAND; main()
// builds the CLI11 app from every registrar, parses, and turns any failure
// into one message on stderr and a non-zero exit code:
//   0 success, 1 runtime failure (I/O, corruption, internal),
//   2 bad input (invalid argument, unknown field, malformed file, not found).
// Library code reports failures as Status; command bodies call Check/Unwrap,
// which throw CliError carrying that Status to the boundary.
#ifndef XWIRES_API_CLI_COMMAND_H_
#define XWIRES_API_CLI_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"

namespace xw::cli {

class CliError : public std::runtime_error {
 public:
  explicit CliError(const Status& s) : std::runtime_error(s.message()), status_(s) {}
  const Status& status() const { return status_; }
  int exit_code() const;

 private:
  Status status_;
};

inline void Check(const Status& s) {
  if (!s.ok()) throw CliError(s);
}

template <typename T>
T Unwrap(Result<T> r) {
  if (!r.ok()) throw CliError(r.status());
  return std::move(r).value();
}

using Registrar = void (*)(CLI::App& app);
// Adds a registrar; `order` sorts subcommands in --help. Returns true so it
// can initialise a static.
bool AddRegistrar(int order, Registrar r);
void RegisterAll(CLI::App& app);

// The arguments every pair command (compare, attribute) takes: positional
// `dataset` and `trial`, and --profile-a / --profile-b ("" = the trial's
// first / second model).
void AddPairOptions(CLI::App* cmd, std::string* dataset, int64_t* trial, std::string* profile_a,
                    std::string* profile_b);

// The options every dataset summary (stats, top) ends with: --where (a
// filter, see `xwires query --help`), --arch (repeatable) and --format
// (table, csv or json).
void AddFilterOptions(CLI::App* cmd, std::string* where,
                      std::vector<std::string>* archs, std::string* format);

// True when stderr is a terminal (progress bars), false in pipes and CI.
bool StderrIsTerminal();

}  // namespace xw::cli

#define XW_CLI_COMMAND(order, fn) \
  static const bool xw_cli_registered_##fn = ::xw::cli::AddRegistrar(order, fn)

#endif  // XWIRES_API_CLI_COMMAND_H_
