#include "testing/command_test.h"

#include "testing/cli_runner.h"
#include "testing/file_tree.h"

namespace xw::testutil {

pid_t CommandTest::Spawn(const std::vector<std::string>& argv,
                         const std::string& log) const {
  return testutil::Spawn(argv, Path(log.empty() ? "stdout" : log + ".out"),
                         Path(log.empty() ? "stderr" : log + ".err"));
}

int CommandTest::Run(const std::vector<std::string>& argv,
                     const std::string& log) const {
  return WaitExit(Spawn(argv, log));
}

pid_t CommandTest::SpawnXwires(std::vector<std::string> args,
                               const std::string& log) const {
  args.insert(args.begin(), XwiresBinary());
  return Spawn(args, log);
}

int CommandTest::RunXwires(const std::vector<std::string>& args,
                           const std::string& log) const {
  return WaitExit(SpawnXwires(args, log));
}

std::string CommandTest::Read(const std::string& name) const {
  return ReadFile(Path(name));
}

}  // namespace xw::testutil
