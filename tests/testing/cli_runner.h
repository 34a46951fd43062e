// Running commands from tests: a shell line with its stdout and stderr
// captured, the built `xwires` CLI, and a process started without a shell
// (to signal or kill it while it runs) and waited for.
#ifndef XWIRES_TESTS_TESTING_CLI_RUNNER_H_
#define XWIRES_TESTS_TESTING_CLI_RUNNER_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace xw::testutil {

struct CommandResult {
  int exit_code = -1;  // the exit status, or 128 + the signal that ended it
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs a /bin/sh command line in a subshell (its own redirections, such as
// `2>&1`, apply inside), capturing stdout and stderr.
CommandResult Run(const std::string& command);

// ${XWIRES_BINARY_DIR}/xwires, the CLI built with the tests.
std::string XwiresBinary();
// Runs `xwires <args>` (args: a shell-quoted command-line tail).
CommandResult Xwires(const std::string& args);

// Run and Xwires with stderr merged into stdout (`out`, in the order
// written; `err` stays empty).
CommandResult RunMerged(const std::string& command);
CommandResult XwiresMerged(const std::string& args);

// Single-quotes a string for /bin/sh.
std::string ShellQuote(const std::string& s);

// Starts argv (argv[0] searched on PATH) with stdout and stderr written to
// the files `out_path` and `err_path` (truncated); the child inherits the
// environment. Returns its pid (a gtest failure and -1 if it cannot start).
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path);
// Waits for `pid`: its exit status, or 128 + the signal that ended it.
int WaitExit(pid_t pid);
// Spawn and WaitExit.
int RunArgv(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_CLI_RUNNER_H_
