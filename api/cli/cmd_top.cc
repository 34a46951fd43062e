// `xwires top DATASET`: the k most (or, with --bottom, least) divergent
// trials of each architecture (the CrossedWires study's Tables 4-6).
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/dataset/query/stats.h"

namespace xw::cli {
namespace {

struct TopArgs {
  std::string dataset, where, format = "table";
  std::vector<std::string> archs;
  int k = 3;
  bool bottom = false;
};

void RunTop(const TopArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  TopOptions opt;
  opt.k = a.k;
  opt.bottom = a.bottom;
  opt.filter.where = a.where;
  opt.filter.archs = a.archs;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  std::string out = FormatTable(TopTable(Unwrap(TopTrials(*ds, opt))), format);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void RegisterTop(CLI::App& app) {
  auto a = std::make_shared<TopArgs>();
  auto* cmd = app.add_subcommand(
      "top", "The k most (or least) divergent trials per architecture");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--k", a->k, "Trials per architecture");
  cmd->add_flag("--bottom", a->bottom, "Least divergent instead of most");
  AddFilterOptions(cmd, &a->where, &a->archs, &a->format);
  cmd->callback([a] { RunTop(*a); });
}
XW_CLI_COMMAND(220, RegisterTop);

}  // namespace
}  // namespace xw::cli
