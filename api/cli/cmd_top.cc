// `xwires top DATASET`: the k most (or, with --bottom, least) divergent
// trials of each architecture (the CrossedWires study's Tables 4-6).
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/query_tables.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/query/stats.h"

namespace xw::cli {
namespace {

struct TopArgs {
  std::string dataset, where, format = "table";
  std::vector<std::string> archs;
  int k = 3;
  bool bottom = false, by_lcb = false, exclude_degenerate = false;
};

// The k trials with the largest lower confidence bound of their replicated
// difference (diff_lcb, docs/significance.md), over every architecture.
Table TopByLcb(const Dataset& ds, const TopArgs& a) {
  TrialQuery q;
  q.where = "diff_lcb is not null" + (a.where.empty() ? "" : " and (" + a.where + ")");
  q.archs = a.archs;
  q.exclude_degenerate = a.exclude_degenerate;
  q.order_by = {a.bottom ? "diff_lcb" : "-diff_lcb", "id"};
  q.limit = a.k;
  Table t;
  t.columns = {"rank",   "id",      "arch",     "profile_a", "profile_b",
               "diff",   "mean_diff", "diff_lcb", "p_value",  "noise_sd", "verdict"};
  int64_t rank = 0;
  for (const TrialRow& row : Unwrap(ds.Query(q))) {
    const std::vector<ReplicaStatsRecord> st = Unwrap(LoadReplicaStats(ds, row.id));
    if (st.empty()) continue;
    const ReplicaStatsRecord& s = st.back();  // the latest, as the query fields
    t.rows.push_back({++rank, row.id, row.arch, s.profile_a, s.profile_b, row.divergence,
                      s.stats.mean_diff, s.stats.lcb, s.stats.permutation_p, s.NoiseSd(),
                      std::string(stats::VerdictName(s.stats.verdict))});
  }
  return t;
}

void RunTop(const TopArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  TopOptions opt;
  opt.k = a.k;
  opt.bottom = a.bottom;
  opt.filter.where = a.where;
  opt.filter.archs = a.archs;
  opt.filter.exclude_degenerate = a.exclude_degenerate;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  Table t;
  if (a.by_lcb) {
    t = TopByLcb(*ds, a);
  } else {
    t = TopTable(Unwrap(TopTrials(*ds, opt)));
    Check(AddSignificanceColumns(*ds, &t));
  }
  std::string out = FormatTable(t, format);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void RegisterTop(CLI::App& app) {
  auto a = std::make_shared<TopArgs>();
  auto* cmd = app.add_subcommand(
      "top", "The k most (or least) divergent trials per architecture");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--k", a->k, "Trials per architecture");
  cmd->add_flag("--bottom", a->bottom, "Least divergent instead of most");
  cmd->add_flag("--by-lcb", a->by_lcb,
                "Rank replicated trials by the lower confidence bound of their difference "
                "(diff_lcb), k in all");
  cmd->add_flag("--exclude-degenerate", a->exclude_degenerate,
                "Leave out trials with a collapsed or at-chance model (query fields collapsed, at_chance)");
  AddFilterOptions(cmd, &a->where, &a->archs, &a->format);
  cmd->callback([a] { RunTop(*a); });
}
XW_CLI_COMMAND(220, RegisterTop);

}  // namespace
}  // namespace xw::cli
