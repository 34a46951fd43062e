// `xwires mi DATASET`: mutual information between each hyperparameter (and
// each pair) and the divergence, per architecture (the CrossedWires study's
// binned estimate, or KSG with --ksg).
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/mi_analysis.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::cli {
namespace {

struct MiArgs {
  std::string dataset, where, format = "table";
  std::vector<std::string> archs;
  bool ksg = false, no_pairs = false, log_scale = false, store = false;
  int repeats = 20, k = 3;
  double jitter = 0.01;
  uint64_t seed = 0;
};

void RunMi(const MiArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  MiAnalysisOptions opt;
  opt.archs = a.archs;
  opt.where = a.where;
  opt.pairs = !a.no_pairs;
  opt.log_scale = a.log_scale;
  opt.mi.estimator = a.ksg ? MiEstimator::kKsg : MiEstimator::kBinned;
  opt.mi.repeats = a.repeats;
  opt.mi.jitter = a.jitter;
  opt.mi.ksg_k = a.k;
  opt.mi.seed = a.seed;
  auto ds = Unwrap(Dataset::Open(
      a.dataset, a.store ? OpenMode::kReadWrite : OpenMode::kReadOnly));
  std::vector<int64_t> trials;
  auto rows = Unwrap(ComputeDatasetMi(*ds, opt, &trials));
  std::string out = FormatTable(MiTable(rows), format);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!a.store) return;
  AnalysisRecord row;
  row.kind = "mi";
  row.trial_ids = std::move(trials);
  row.summary = MiSummary(rows, opt);
  row.result_json = MiResultJson(rows, opt);
  const int64_t id = Unwrap(StoreAnalysis(*ds, row));
  std::fprintf(stderr, "stored mi result %lld (over %zu trials)\n",
               static_cast<long long>(id), row.trial_ids.size());
}

void RegisterMi(CLI::App& app) {
  auto a = std::make_shared<MiArgs>();
  auto* cmd = app.add_subcommand(
      "mi",
      "Mutual information between hyperparameters (and pairs) and divergence");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--arch", a->archs, "Only these architectures (repeatable)");
  cmd->add_option("--where", a->where, "Filter (see `xwires query --help`)");
  cmd->add_flag("--ksg", a->ksg,
                "Kraskov (KSG) kNN estimator instead of 0.1 bins");
  cmd->add_option("--k", a->k, "Neighbours of the KSG estimator")
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Repeats with jitter (mean and std)")
      ->capture_default_str();
  cmd->add_option("--jitter", a->jitter,
                  "Uniform jitter half-width on normalised values")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the jitter")
      ->capture_default_str();
  cmd->add_flag("--no-pairs", a->no_pairs, "Single hyperparameters only");
  cmd->add_flag("--log-scale", a->log_scale,
                "log10 of lr, adam_eps, weight_decay first");
  cmd->add_option("--format", a->format, "table, csv or json");
  cmd->add_flag("--store", a->store,
                "Store the result in the dataset with the trials it was "
                "computed over (travels with them in bundles and merges)");
  cmd->callback([a] { RunMi(*a); });
}
XW_CLI_COMMAND(410, RegisterMi);

}  // namespace
}  // namespace xw::cli
