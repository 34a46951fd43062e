// `xwires conformance`: trains a few Adam steps under the `torch` profile and
// the TensorFlow.js variant of `tf` next to PyTorch and TensorFlow.js on this
// machine, and prints the worst relative weight difference per step against
// its bound (api/conformance.h, docs/profiles.md "Conformance").
// Exit 0 when every row is within its bound, 1 when one is not; a framework
// that is not installed is skipped with a message saying how to install it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/conformance.h"

namespace xw::cli {
namespace {

void RunConformanceCommand(const ConformanceOptions& options) {
  std::printf("%s\n", ConformanceTableHeader().c_str());
  std::fflush(stdout);
  const ConformanceRow* first_fail = nullptr;
  ConformanceReport report = Unwrap(RunConformance(
      options,
      [](const ConformanceRow& r) {
        std::printf("%s\n", FormatConformanceRow(r).c_str());
        std::fflush(stdout);
      },
      [](const ConformanceSkip& s) {
        std::printf("skipped %s: %s\n", s.framework.c_str(), s.reason.c_str());
        std::fflush(stdout);
      }));
  for (const ConformanceRow& r : report.rows) {
    if (!r.pass() && first_fail == nullptr) first_fail = &r;
  }
  std::printf("machine: %s\n", report.cpu.c_str());
  if (report.rows.empty()) {
    std::printf("conformance: nothing was checked (every framework was skipped)\n");
    return;
  }
  if (first_fail != nullptr) {
    std::printf("conformance: FAILED: %s %s on %s exceeds its bound first at %s step %lld "
                "(%.3e > %.3e, %s)\n",
                first_fail->framework.c_str(), first_fail->arch.c_str(),
                first_fail->target.c_str(), first_fail->kind.c_str(),
                static_cast<long long>(first_fail->step), first_fail->error, first_fail->bound,
                first_fail->worst.c_str());
    std::fflush(stdout);
    std::exit(1);
  }
  std::printf("conformance: all %zu checks within their bounds\n", report.rows.size());
}

void RegisterConformance(CLI::App& app) {
  auto o = std::make_shared<ConformanceOptions>();
  auto* cmd = app.add_subcommand(
      "conformance",
      "Train a few Adam steps next to PyTorch and TensorFlow.js and compare every weight");
  cmd->add_option("--framework", o->frameworks, "tfjs and/or pytorch (default: both)")
      ->check(CLI::IsMember({"tfjs", "pytorch"}));
  cmd->add_option("--arch", o->archs,
                  "Architectures (default: tfjs simple_cnn resnet20 vgg11; pytorch also mlp)");
  cmd->add_option("--target", o->targets,
                  "SIMD targets to train on (AVX3, AVX2, SSE4, ...; 'all': every one this CPU "
                  "runs; default: the dispatched one)");
  cmd->add_option("--steps", o->steps, "Adam steps of 50 images")->capture_default_str();
  cmd->add_option("--source-dir", o->source_dir,
                  "xwires source tree with scripts/ and tests/conformance/ (default: the one "
                  "this binary was built from)");
  cmd->add_option("--work-dir", o->work_dir,
                  "Keep the data, exchange files and runner logs here (default: a temporary "
                  "directory, removed)");
  cmd->add_option("--python", o->python, "Python with torch and sklearn")->capture_default_str();
  cmd->add_option("--node", o->node, "Node.js")->capture_default_str();
  cmd->add_option("--threads", o->threads, "xwires threads (0: all cores)")
      ->capture_default_str();
  cmd->callback([o] { RunConformanceCommand(*o); });
}
XW_CLI_COMMAND(12, RegisterConformance);

}  // namespace
}  // namespace xw::cli
