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

void AddPairOptions(CLI::App* cmd, std::string* dataset, int64_t* trial, std::string* profile_a,
                    std::string* profile_b) {
  cmd->add_option("dataset", *dataset, "Dataset directory")->required();
  cmd->add_option("trial", *trial, "Trial id")->required();
  cmd->add_option("--profile-a", *profile_a, "Model A's profile (default: first model)");
  cmd->add_option("--profile-b", *profile_b, "Model B's profile (default: second model)");
}

void AddFilterOptions(CLI::App* cmd, std::string* where,
                      std::vector<std::string>* archs, std::string* format) {
  cmd->add_option("--where", *where, "Filter (see `xwires query --help`)");
  cmd->add_option("--arch", *archs, "Only these architectures (repeatable)");
  cmd->add_option("--format", *format, "table, csv or json");
}

}  // namespace xw::cli
