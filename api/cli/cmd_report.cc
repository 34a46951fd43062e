// `xwires report DATASET -o report.html`: one self-contained HTML file with
// the dataset's statistics, distributions, hyperparameter scatter plots,
// mutual information, training curves and stored analyses (api/report.h).
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/output_files.h"
#include "xwires/api/report.h"

namespace xw::cli {
namespace {

struct ReportArgs {
  std::string dataset, out;
  ReportOptions opt;
  bool ksg = false;
};

void RunReport(ReportArgs& a) {
  a.opt.mi.estimator = a.ksg ? MiEstimator::kKsg : MiEstimator::kBinned;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  Report r = Unwrap(BuildReport(*ds, a.opt));
  // Written through a temp file and renamed: a failure never leaves a
  // half-written report in place of an older one.
  Check(WriteFileAtomic(a.out, r.html));
  std::printf("wrote %s (%zu plots, %zu bytes)\n", a.out.c_str(),
              r.plot_ids.size(), r.html.size());
}

void RegisterReport(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report", "Write a self-contained HTML report of a dataset");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("-o,--out", a->out, "Output HTML file")->required();
  cmd->add_option("--title", a->opt.title, "Page title")->capture_default_str();
  cmd->add_option("--arch", a->opt.archs,
                  "Only these architectures (repeatable)");
  cmd->add_option("--where", a->opt.where,
                  "Filter (see `xwires query --help`)");
  cmd->add_option("--top", a->opt.top_k,
                  "Training curves of the k most divergent pairs per arch")
      ->capture_default_str();
  cmd->add_option("--threshold", a->opt.threshold,
                  "Divergence threshold of the share column")
      ->capture_default_str();
  cmd->add_option("--mi-repeats", a->opt.mi.repeats, "MI repeats with jitter")
      ->capture_default_str();
  cmd->add_option("--mi-jitter", a->opt.mi.jitter, "MI jitter half-width")
      ->capture_default_str();
  cmd->add_option("--mi-shuffles", a->opt.mi.shuffles,
                  "Permutations of the MI null baseline (0: none)")
      ->capture_default_str();
  cmd->add_flag("--exclude-degenerate", a->opt.exclude_degenerate,
                "Leave trials with a collapsed or at-chance model out of the "
                "statistics and top tables");
  cmd->add_flag("--ksg", a->ksg, "KSG estimator for the MI bars");
  cmd->callback([a] { RunReport(*a); });
}
XW_CLI_COMMAND(415, RegisterReport);

}  // namespace
}  // namespace xw::cli
