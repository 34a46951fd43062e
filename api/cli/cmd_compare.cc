// `xwires compare DATASET TRIAL`: where two stored models of a pair differ --
// tensors, per-module activations on a probe batch, task metrics -- with a
// verdict per tier (api/compare.h).
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/api/compare.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::cli {
namespace {

struct CompareArgs {
  std::string dataset, format = "table";
  int64_t trial = 0;
  CompareOptions opt;
  bool store = false;
};

void RunCompare(const CompareArgs& a) {
  if (a.format != "table" && a.format != "json") {
    Check(Status::InvalidArgument("--format: '" + a.format +
                                  "' (expected table or json)"));
  }
  auto ds = Unwrap(Dataset::Open(
      a.dataset, a.store ? OpenMode::kReadWrite : OpenMode::kReadOnly));
  CompareReport r = Unwrap(ComparePair(*ds, a.trial, a.opt));
  const std::string json = CompareJson(r);
  std::string out = a.format == "json" ? json + "\n" : CompareText(r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (a.store) {
    const AnalysisRecord row = CompareAnalysisRecord(r);
    const int64_t id = Unwrap(StoreAnalysis(*ds, row));
    std::fprintf(stderr, "stored compare result %lld\n",
                 static_cast<long long>(id));
  }
}

void RegisterCompare(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare",
                                 "Three-tier comparison of a stored pair: "
                                 "tensors, activations, task metrics");
  AddPairOptions(cmd, &a->dataset, &a->trial, &a->opt.profile_a, &a->opt.profile_b);
  cmd->add_option("--probe", a->opt.probe,
                  "Probe batch size of the activation tier")
      ->capture_default_str();
  cmd->add_option("--rtol", a->opt.rtol, "Relative tolerance (numpy.isclose)")
      ->capture_default_str();
  cmd->add_option("--atol", a->opt.atol, "Absolute tolerance (numpy.isclose)")
      ->capture_default_str();
  cmd->add_option("--acc-tol", a->opt.acc_tol,
                  "Task tier: tolerated accuracy difference")
      ->capture_default_str();
  cmd->add_option("--threads", a->opt.threads, "Threads (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--eval-batch-size", a->opt.eval_batch,
                  "Batch size of the task tier")
      ->capture_default_str();
  cmd->add_option("--format", a->format, "table or json")
      ->capture_default_str();
  cmd->add_flag("--store", a->store,
                "Store the result in the dataset (shown by `report`)");
  cmd->callback([a] { RunCompare(*a); });
}
XW_CLI_COMMAND(400, RegisterCompare);

}  // namespace
}  // namespace xw::cli
