#include "testing/cli_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>

#include "testing/file_tree.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace xw::testutil {

namespace {
int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}
}  // namespace

CommandResult Run(const std::string& command) {
  TempDir tmp("xwires-run");
  const std::string out = tmp.Path("out"), err = tmp.Path("err");
  CommandResult r;
  const int status = std::system(
      ("(" + command + "\n) >" + ShellQuote(out) + " 2>" + ShellQuote(err))
          .c_str());
  r.exit_code = status == -1 ? -1 : ExitCode(status);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::string XwiresBinary() { return XWIRES_BINARY_DIR "/xwires"; }

CommandResult Xwires(const std::string& args) {
  return Run(ShellQuote(XwiresBinary()) + " " + args);
}

CommandResult RunMerged(const std::string& command) {
  return Run("(" + command + "\n) 2>&1");
}

CommandResult XwiresMerged(const std::string& args) {
  return RunMerged(ShellQuote(XwiresBinary()) + " " + args);
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  return rc == 0 ? pid : -1;
}

int WaitExit(pid_t pid) {
  if (pid <= 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return ExitCode(status);
}

int RunArgv(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path) {
  return WaitExit(Spawn(argv, out_path, err_path));
}

}  // namespace xw::testutil
