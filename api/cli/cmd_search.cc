// `xwires search`: the divergence search (hpo/search_driver.h). With no
// arguments it runs the 5-minute default search on the built-in synthetic
// data and writes ./xwires-data; `--resume ID` continues a search after a
// crash or with a larger budget; under `mpirun -n R` the ranks share the
// subspaces (docs/cluster.md). Progress goes to stderr (a bar on a terminal,
// one line per trial otherwise), the table of the most divergent pairs to
// stdout.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "command.h"
#include "xwires/dataset/dataset.h"
#include "xwires/dataset/table.h"
#include "xwires/hpo/search_driver.h"

namespace xw::cli {
namespace {

struct SearchArgs {
  std::string config, dataset = "xwires-data", objective;
  int64_t resume = 0, max_trials = 0;
  int trials_per_subspace = 0, jobs = 0, threads = 0, top = 10;
  double max_seconds = 0;
  std::optional<int64_t> seed;
  bool no_subspaces = false, quiet = false;
};

std::string Duration(double s) {
  if (!(s >= 0)) return "?";
  const int64_t t = std::llround(s);
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm",
                  static_cast<long long>(t / 3600),
                  static_cast<long long>(t / 60 % 60));
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds",
                  static_cast<long long>(t / 60),
                  static_cast<long long>(t % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(t));
  }
  return buf;
}

// Trial lines and, on a terminal, a bar kept on the last line of stderr.
class SearchProgressPrinter {
 public:
  SearchProgressPrinter(bool terminal, bool quiet)
      : terminal_(terminal), quiet_(quiet) {}

  void Message(const std::string& m) {
    if (quiet_) return;
    std::fprintf(stderr, "%s\n", m.c_str());
  }

  void Update(const hpo::SearchProgress& p) {
    if (quiet_ || (p.trial_id == 0 && !terminal_)) return;
    const int64_t ended = p.finished + p.failed;
    char tail[192];
    if (p.best >= 0) {
      std::snprintf(tail, sizeof tail,
                    "best %.4f (trial %lld), %lld running, %s elapsed, ETA %s",
                    p.best, static_cast<long long>(p.best_trial),
                    static_cast<long long>(p.running),
                    Duration(p.elapsed_s).c_str(), Duration(p.eta_s).c_str());
    } else {
      std::snprintf(tail, sizeof tail, "%lld running, %s elapsed",
                    static_cast<long long>(p.running),
                    Duration(p.elapsed_s).c_str());
    }
    char trial[64];
    std::snprintf(trial, sizeof trial, "trial %lld (subspace %d): ",
                  static_cast<long long>(p.trial_id), p.subspace);
    if (!terminal_) {
      std::fprintf(
          stderr, "[%lld/%lld] %s%s | %s\n", static_cast<long long>(ended),
          static_cast<long long>(p.planned), trial, p.trial_text.c_str(), tail);
      return;
    }
    // A finished trial's line scrolls up; the bar stays on the last line.
    constexpr int kWidth = 24;
    const int fill =
        p.planned > 0
            ? static_cast<int>(kWidth * std::min<int64_t>(ended, p.planned) /
                               p.planned)
            : 0;
    std::string bar(fill, '#');
    bar.resize(kWidth, '-');
    const std::string line = p.trial_id == 0 ? "" : trial + p.trial_text + "\n";
    std::fprintf(stderr, "\r\033[K%s[%s] %lld/%lld trials | %s", line.c_str(),
                 bar.c_str(), static_cast<long long>(ended),
                 static_cast<long long>(p.planned), tail);
    std::fflush(stderr);
    bar_open_ = true;
  }

  void Finish() {
    if (bar_open_) std::fprintf(stderr, "\n");
    bar_open_ = false;
  }

 private:
  bool terminal_, quiet_;
  bool bar_open_ = false;
};

// The `top` most divergent finished pairs of the search, as a table.
void PrintTop(const std::string& dir, int64_t search_id, int top) {
  auto ds = Unwrap(Dataset::Open(dir, OpenMode::kReadOnly));
  auto searches = Unwrap(ds->Searches());
  hpo::DriverConfig config;
  for (const SearchRow& s : searches) {
    if (s.id == search_id)
      config = Unwrap(hpo::ParseDriverConfigJson(s.record.config_json));
  }
  TrialQuery q;
  q.where = "search_id = " + std::to_string(search_id) + " and diff >= 0";
  q.order_by = {"-diff", "id"};
  q.limit = top;
  auto rows = Unwrap(ds->Query(q));
  Table t;
  t.columns = {"trial"};
  for (const hpo::Dimension& d : config.search.space.dims())
    t.columns.push_back(d.name);
  for (const std::string& p : config.search.profiles)
    t.columns.push_back("acc_" + p);
  t.columns.push_back(hpo::ObjectiveName(config.search.objective));
  for (const TrialRow& r : rows) {
    std::vector<Cell> row = {r.id};
    auto h = nlohmann::json::parse(r.hparams_json, nullptr, false);
    for (const hpo::Dimension& d : config.search.space.dims()) {
      if (!h.is_object() || !h.contains(d.name) || !h[d.name].is_number()) {
        row.push_back(std::monostate{});
      } else if (d.type == hpo::DimType::kInteger) {
        row.push_back(h[d.name].get<int64_t>());
      } else {
        row.push_back(h[d.name].get<double>());
      }
    }
    for (const std::string& p : config.search.profiles) {
      const ModelRow* m = r.Model(p);
      row.push_back(m != nullptr ? Cell(m->test_acc) : Cell(std::monostate{}));
    }
    row.push_back(r.divergence);
    t.rows.push_back(std::move(row));
  }
  std::printf("most divergent pairs of search %lld:\n%s",
              static_cast<long long>(search_id),
              FormatTable(t, TableFormat::kTable).c_str());
}

void RunSearchCommand(const SearchArgs& a) {
  hpo::DriverConfig config = hpo::DefaultDriverConfig();
  if (a.resume > 0) {
    if (!a.config.empty() || a.seed || a.no_subspaces || !a.objective.empty()) {
      Check(Status::InvalidArgument(
          "--resume continues a stored search: --config, --seed, "
          "--no-subspaces and --objective "
          "cannot change it (budget options can)"));
    }
  } else {
    if (!a.config.empty()) config = Unwrap(hpo::LoadDriverConfig(a.config));
    if (a.seed) config.search.optimizer.seed = static_cast<uint64_t>(*a.seed);
    if (a.no_subspaces) config.search.no_subspaces = true;
    if (!a.objective.empty())
      config.search.objective = Unwrap(hpo::ParseObjective(a.objective));
  }
  if (a.top < 0) Check(Status::InvalidArgument("--top must be >= 0"));
  hpo::DriverOptions o;
  o.dataset_dir = a.dataset;
  if (a.resume != 0) o.resume_id = a.resume;
  o.trials_per_subspace = a.trials_per_subspace;
  o.max_trials = a.max_trials;
  o.max_seconds = a.max_seconds;
  o.jobs = a.jobs;
  o.threads = a.threads;
  if (a.trials_per_subspace < 0)
    Check(Status::InvalidArgument("--trials-per-subspace must be >= 1"));

  std::unique_ptr<hpo::Cluster> cluster =
      Unwrap(hpo::StartMpiCluster(nullptr, nullptr));
  const bool root = cluster->rank() == 0;
  SearchProgressPrinter progress(StderrIsTerminal(), a.quiet || !root);
  o.on_progress = [&](const hpo::SearchProgress& p) { progress.Update(p); };
  o.on_message = [&](const std::string& m) { progress.Message(m); };
  auto result = hpo::RunSearch(config, o, *cluster);
  progress.Finish();
  if (!root) {
    // Rank 0 reports (and the exit code carries) whatever went wrong.
    const int code = result.ok() ? 0 : CliError(result.status()).exit_code();
    cluster.reset();
    std::exit(code);
  }
  cluster.reset();
  const hpo::SearchSummary s = Unwrap(std::move(result));
  const std::string how =
      s.status == "stopped" ? "stopped before all planned trials (time budget)"
                            : s.status;
  std::printf("search %lld %s: %lld trials finished, %lld failed",
              static_cast<long long>(s.search_id), how.c_str(),
              static_cast<long long>(s.finished),
              static_cast<long long>(s.failed));
  if (s.best >= 0) {
    std::printf("; best %.4f (trial %lld)", s.best,
                static_cast<long long>(s.best_trial));
  }
  std::printf("\n");
  if (a.top > 0) PrintTop(a.dataset, s.search_id, a.top);
  std::printf(
      "dataset: %s (continue with: xwires search --dataset %s --resume %lld)\n",
      a.dataset.c_str(), a.dataset.c_str(),
      static_cast<long long>(s.search_id));
}

void RegisterSearch(CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand(
      "search",
      "Search hyperparameters that make two numerics profiles diverge (GP over "
      "HyperSpace subspaces); no arguments: the 5-minute default search");
  cmd->add_option("--config", args->config,
                  "Search config JSON (docs/search.md); missing keys take the "
                  "default search's");
  cmd->add_option("--dataset", args->dataset,
                  "Dataset directory (created if missing)")
      ->capture_default_str();
  cmd->add_option("--resume", args->resume,
                  "Continue search ID of the dataset");
  cmd->add_option(
      "--trials-per-subspace", args->trials_per_subspace,
      "Trials per subspace (overrides the config; allowed with --resume)");
  cmd->add_option("--max-trials", args->max_trials,
                  "Stop after N trials in all (0: config)");
  cmd->add_option(
      "--max-seconds", args->max_seconds,
      "Start no trial expected to end after S seconds of this run (0: config)");
  cmd->add_option("--jobs", args->jobs,
                  "Concurrent trials per process (0: min(4, threads))")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads per process, split between the jobs (0: cores / "
                  "ranks on the node)")
      ->capture_default_str();
  cmd->add_flag("--no-subspaces", args->no_subspaces,
                "One GP over the whole space");
  cmd->add_option("--seed", args->seed,
                  "Search seed (optimizer designs; overrides the config)");
  cmd->add_option(
      "--objective", args->objective,
      "abs_acc_diff | disagreement | max_class_gap (overrides the config)");
  cmd->add_option("--top", args->top,
                  "Rows of the final table of most divergent pairs")
      ->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->callback([args] { RunSearchCommand(*args); });
}
XW_CLI_COMMAND(20, RegisterSearch);

}  // namespace
}  // namespace xw::cli
