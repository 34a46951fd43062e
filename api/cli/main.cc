// xwires: generate, store and query divergent model pairs.
#include <cstdio>
#include <exception>
#include <string>

#include "command.h"
#include "xwires/core/build_info.h"
#include "xwires/core/simd_target.h"

namespace {

// One line: the toolkit version and the build facts a bug report needs.
std::string VersionLine() {
  const auto& b = xw::GetBuildInfo();
  char line[512];
  std::snprintf(line, sizeof line, "xwires %s (%s, kernels hwy:%s, %s, %s; Eigen %s, oneTBB %s)",
                b.toolkit_version.c_str(), b.isa.c_str(), xw::KernelTargetVariant().c_str(),
                b.compiler.c_str(), b.build_type.c_str(), b.eigen_version.c_str(),
                b.tbb_version.c_str());
  return line;
}

void RegisterVersion(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the toolkit version and build facts");
  cmd->callback([] { std::printf("%s\n", VersionLine().c_str()); });
}
XW_CLI_COMMAND(1000, RegisterVersion);

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xwires: train, search, store and analyse divergent model pairs"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  // `xwires --version` prints what `xwires version` does (evaluated when
  // given, so it names the kernels XWIRES_SIMD_TARGET selects).
  app.set_version_flag("--version", [] { return VersionLine(); },
                       "Print the toolkit version and build facts, then exit");
  xw::cli::RegisterAll(app);
  // XWIRES_SIMD_TARGET=AVX2 (say) runs the kernels as on a CPU of that class.
  if (xw::Status s = xw::SetKernelTargetFromEnv(); !s.ok()) {
    std::fprintf(stderr, "xwires: error: %s\n", s.message().c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const xw::cli::CliError& e) {
    std::fprintf(stderr, "xwires: error: %s\n", e.status().message().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xwires: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
