// A gtest fixture for tests that run commands in a scratch directory of
// their own: Path(name) is a file in it, Spawn/Run start a command with its
// stdout and stderr written to files there, Read gives a file back.
#ifndef XWIRES_TESTS_TESTING_COMMAND_TEST_H_
#define XWIRES_TESTS_TESTING_COMMAND_TEST_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace xw::testutil {

class CommandTest : public ::testing::Test {
 protected:
  // The directory of Path (removed after the test).
  const std::string& dir() const { return tmp_.path(); }
  std::string Path(const std::string& name) const { return tmp_.Path(name); }

  // Starts argv (argv[0] searched on PATH) with stdout and stderr to the
  // files "stdout" and "stderr" (`log`.out and `log`.err when `log` is
  // given), truncated; returns its pid.
  pid_t Spawn(const std::vector<std::string>& argv,
              const std::string& log = "") const;
  // Spawns argv and waits: its exit status, or 128 + the signal that ended it.
  int Run(const std::vector<std::string>& argv,
          const std::string& log = "") const;
  // Spawn and Run of the built CLI: `xwires args...`.
  pid_t SpawnXwires(std::vector<std::string> args,
                    const std::string& log = "") const;
  int RunXwires(const std::vector<std::string>& args,
                const std::string& log = "") const;
  // The bytes of Path(name) ("" if missing).
  std::string Read(const std::string& name) const;

 private:
  TempDir tmp_{"xwires-cmd-test"};
};

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_COMMAND_TEST_H_
