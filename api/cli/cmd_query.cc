// `xwires query DATASET`: trials matching a filter, nearest trials to a
// hyperparameter point, as a table, CSV or JSON.
//   xwires query DS --where "lr >= 1e-3 and batch_size < 500 and diff > 0.3"
//       --arch vgg16 --sort -diff --limit 10 --format table
//   xwires query DS --near "lr=0.05,adam_eps=0.2,batch_size=200,epochs=20"
//       --limit 5
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "int_option.h"
#include "xwires/api/query_tables.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::cli {
namespace {

struct QueryArgs {
  std::string dataset, where, near, format = "table";
  std::vector<std::string> archs, profiles, statuses, sort;
  int64_t limit = -1, offset = 0;
  bool count = false, exclude_degenerate = false;
};

void RunQuery(const QueryArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  TrialQuery q;
  q.where = a.where;
  q.archs = a.archs;
  q.profiles = a.profiles;
  q.statuses = a.statuses;
  q.order_by = a.sort;
  q.limit = a.limit;
  q.offset = a.offset;
  q.exclude_degenerate = a.exclude_degenerate;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  if (a.count) {
    std::printf("%lld\n", static_cast<long long>(Unwrap(ds->Count(q))));
    return;
  }
  Table t;
  if (!a.near.empty()) {
    NearTarget target = Unwrap(ParseNearTarget(a.near));
    t = NearTable(Unwrap(ds->Near(target, q)));
  } else {
    t = TrialsTable(Unwrap(ds->Query(q)));
  }
  Check(AddSignificanceColumns(*ds, &t));
  std::string out = FormatTable(t, format);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void RegisterQuery(CLI::App& app) {
  auto a = std::make_shared<QueryArgs>();
  auto* cmd =
      app.add_subcommand("query", "List trials of a dataset matching a filter");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option(
      "--where", a->where,
      "Filter, e.g. \"lr >= 1e-3 and batch_size < 500 and diff > 0.3\" "
      "(fields: lr adam_eps beta1 beta2 weight_decay batch_size epochs seed "
      "diff id "
      "search_id arch data status name provenance acc_<profile> "
      "train_acc_<profile> "
      "loss_<profile> train_loss_<profile> collapsed at_chance; stored settings width "
      "depth dropout train_limit test_limit data_seed init_weights profiles isa_<profile> "
      "simd_<profile> cpu_<profile> threads_<profile>; and/or/not, parentheses)");
  cmd->add_option("--arch", a->archs, "Only these architectures (repeatable)");
  cmd->add_option("--profile", a->profiles,
                  "Only trials with a model of this profile (repeatable)");
  cmd->add_option(
      "--status", a->statuses,
      "Only trials with this status (ok, diverged, failed, incomplete)");
  cmd->add_option(
      "--sort", a->sort,
      "Sort field, '-' prefix for descending (e.g. -diff); repeatable");
  AddIntOption(cmd, "--limit", &a->limit, -1, kInt64Max,
               "At most this many rows (-1: all; 10 with --near)");
  AddIntOption(cmd, "--offset", &a->offset, 0, kInt64Max, "Skip this many rows");
  cmd->add_option(
      "--near", a->near,
      "Nearest trials to name=value,... in normalised hyperparameter space "
      "(log scale for lr and adam_eps)");
  cmd->add_option("--format", a->format, "table, csv or json");
  cmd->add_flag("--exclude-degenerate", a->exclude_degenerate,
                "Leave out trials with a collapsed or at-chance model (query fields collapsed, at_chance)");
  cmd->add_flag("--count", a->count,
                "Print only the number of matching trials");
  cmd->callback([a] { RunQuery(*a); });
}
XW_CLI_COMMAND(200, RegisterQuery);

}  // namespace
}  // namespace xw::cli
