// `xwires stats DATASET`: divergence statistics per architecture (the
// CrossedWires study's Tables 2 and 3).
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/dataset/query/isa_pooling.h"
#include "xwires/dataset/query/stats.h"

namespace xw::cli {
namespace {

struct StatsArgs {
  std::string dataset, where, by = "arch", format = "table";
  std::vector<std::string> archs;
  double threshold = 0.05;
  bool exclude_degenerate = false;
};

void RunStats(const StatsArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  StatsOptions opt;
  opt.by = a.by;
  opt.threshold = a.threshold;
  opt.filter.where = a.where;
  opt.filter.archs = a.archs;
  opt.filter.exclude_degenerate = a.exclude_degenerate;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  auto stats = Unwrap(ComputeStats(*ds, opt));
  std::string out = FormatTable(StatsTable(stats, opt), format);
  std::fwrite(out.data(), 1, out.size(), stdout);
  // The table pools models; say where an ISA-dependent profile's come from
  // different CPUs (isa_pooling.h).
  for (const IsaMixedProfile& p : Unwrap(FindIsaMixedProfiles(*ds, opt.filter))) {
    std::fprintf(stderr, "%s\n", IsaMixedWarning(p).c_str());
  }
}

void RegisterStats(CLI::App& app) {
  auto a = std::make_shared<StatsArgs>();
  auto* cmd = app.add_subcommand("stats",
                                 "Divergence min/max/median/mean, share >= "
                                 "threshold and accuracy ranges per group");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--by", a->by, "Group by a field (arch, data, width, depth, train_limit, search_id, profiles, simd_<profile>, ...) or none");
  cmd->add_option("--threshold", a->threshold,
                  "Divergence threshold of the share column");
  cmd->add_flag("--exclude-degenerate", a->exclude_degenerate,
                "Leave out trials with a collapsed or at-chance model (query fields collapsed, at_chance)");
  AddFilterOptions(cmd, &a->where, &a->archs, &a->format);
  cmd->callback([a] { RunStats(*a); });
}
XW_CLI_COMMAND(210, RegisterStats);

}  // namespace
}  // namespace xw::cli
