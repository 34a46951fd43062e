// `xwires show DATASET TRIAL`: one trial with its hyperparameters, models
// and (with --curves) per-epoch curves; then its replicas and their
// statistics when `replicate` stored any.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/replica_tables.h"
#include "xwires/dataset/query/export.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw::cli {
namespace {

struct ShowArgs {
  std::string dataset, format = "table";
  int64_t trial = 0;
  bool curves = false;
};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return v != v ? "-" : buf;
}

void PrintTable(const TrialRow& t,
                const std::vector<std::vector<EpochMetrics>>& curves,
                bool full) {
  std::string out;
  auto kv = [&](const std::string& k, const std::string& v) {
    out += k + ": " + v + "\n";
  };
  auto opt = [](const std::optional<int64_t>& v) {
    return v ? std::to_string(*v) : "-";
  };
  auto recorded = [](const std::optional<int64_t>& v) {
    return v ? std::to_string(*v) : "not recorded";
  };
  kv("trial", std::to_string(t.id) +
                  (t.external_id.empty() ? "" : " (" + t.external_id + ")"));
  kv("arch", t.arch);
  kv("data", t.data_spec);
  kv("status", t.status);
  kv("diff", Num(t.divergence));
  kv("lr", Num(t.lr));
  kv("adam_eps", Num(t.adam_eps));
  kv("beta1, beta2", Num(t.beta1) + ", " + Num(t.beta2));
  kv("weight_decay", Num(t.weight_decay));
  kv("batch_size", opt(t.batch_size));
  kv("epochs", opt(t.epochs));
  kv("seed", recorded(t.seed));
  kv("search", opt(t.search_id));
  kv("created", t.created_at);
  kv("provenance", t.provenance);
  kv("hparams", t.hparams_json);
  kv("extra", t.extra_json);
  // Degenerate models (degenerate.h): 1, 0 or "-" when unknown.
  const std::vector<ModelFlags> flags = DegenerateFlags(t);
  auto flag = [](int v) { return v < 0 ? Cell{} : Cell{int64_t{v}}; };
  Table m;
  m.columns = {"model",    "profile",    "status",    "train_acc",
               "test_acc", "train_loss", "test_loss", "epochs",
               "weights",  "params",     "wall_s",    "collapsed",
               "at_chance"};
  for (size_t i = 0; i < t.models.size(); ++i) {
    const ModelRow& r = t.models[i];
    m.rows.push_back(
        {r.id, r.profile + (r.external ? " (external)" : ""), r.status,
         r.train_acc, r.test_acc, r.train_loss, r.test_loss, r.n_epochs,
         r.has_weights ? r.weights_sha256.substr(0, 12) : std::string("-"),
         // 0 parameters: not recorded (imported results), see dataset.md.
         r.param_count > 0 ? Cell{r.param_count}
                           : Cell{std::string("not recorded")},
         r.wall_time_s, flag(flags[i].collapsed), flag(flags[i].at_chance)});
  }
  out += "\n" + FormatTable(m, TableFormat::kTable);
  for (size_t i = 0; full && i < t.models.size(); ++i) {
    Table c;
    c.columns = {"epoch",     "train_loss_mean", "train_loss_last",
                 "train_acc", "test_loss",       "test_acc"};
    for (const auto& e : curves[i]) {
      c.rows.push_back({int64_t{e.epoch}, e.train_loss_mean, e.train_loss_last,
                        e.train_acc, e.test_loss, e.test_acc});
    }
    out += "\ncurves of " + t.models[i].profile + ":\n" +
           FormatTable(c, TableFormat::kTable);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void RunShow(const ShowArgs& a) {
  if (a.format != "table" && a.format != "json") {
    Check(Status::InvalidArgument("show: unknown format '" + a.format +
                                  "' (table, json)"));
  }
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  TrialRow t = Unwrap(ds->GetTrial(a.trial));
  std::vector<std::vector<EpochMetrics>> curves;
  if (a.curves) {
    for (const auto& m : t.models)
      curves.push_back(Unwrap(ds->LoadCurves(m.id)));
  }
  if (a.format == "json") {
    std::string out = TrialJson(t, a.curves ? &curves : nullptr);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    PrintTable(t, curves, a.curves);
    // Replicas and their verdicts, when the trial has any (`replicate`).
    const Table reps = Unwrap(ReplicaTable(*ds, a.trial));
    if (!reps.rows.empty()) {
      const Table st = Unwrap(ReplicaStatsTable(*ds, a.trial));
      const std::string out = "\nreplicas:\n" + FormatTable(reps, TableFormat::kTable) +
                              (st.rows.empty() ? std::string()
                                               : "\nstatistics:\n" +
                                                     FormatTable(st, TableFormat::kTable));
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
  }
}

void RegisterShow(CLI::App& app) {
  auto a = std::make_shared<ShowArgs>();
  auto* cmd =
      app.add_subcommand("show", "Show one trial, its models and curves");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("trial", a->trial, "Trial id")->required();
  cmd->add_flag("--curves", a->curves, "Include per-epoch curves");
  cmd->add_option("--format", a->format, "table or json");
  cmd->callback([a] { RunShow(*a); });
}
XW_CLI_COMMAND(250, RegisterShow);

}  // namespace
}  // namespace xw::cli
