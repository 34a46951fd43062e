#include "command.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace xw::cli {

namespace {
std::vector<std::pair<int, Registrar>>& Registry() {
  static std::vector<std::pair<int, Registrar>> r;
  return r;
}
}  // namespace

int CliError::exit_code() const {
  switch (status_.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
    case Status::Code::kCorruption:
    case Status::Code::kNotSupported:
    case Status::Code::kAlreadyExists:
    case Status::Code::kFailedPrecondition:
      return 2;
    default:
      return 1;
  }
}

bool AddRegistrar(int order, Registrar r) {
  Registry().emplace_back(order, r);
  return true;
}

void RegisterAll(CLI::App& app) {
  auto regs = Registry();
  std::stable_sort(regs.begin(), regs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, fn] : regs) fn(app);
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace xw::cli
