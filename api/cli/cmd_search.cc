// `xwires search`: the divergence search (hpo/search_driver.h). With no
// arguments it runs the 5-minute default search on the built-in synthetic
// data and writes ./xwires-data; `--resume ID` continues a search after a
// crash or with a larger budget; under `mpirun -n R` the ranks share the
// subspaces (docs/cluster.md). Progress goes to stderr (a bar on a terminal,
// one line per trial otherwise), the table of the most divergent pairs to
// stdout.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "int_option.h"
#include "stop_signals.h"
#include "xwires/api/progress_text.h"
#include "xwires/api/search_run.h"
#include "xwires/dataset/query/table.h"
#include "xwires/hpo/search_driver.h"

namespace xw::cli {
namespace {

struct SearchArgs {
  std::string config, dataset = "xwires-data", objective;
  int64_t resume = 0, max_trials = 0;
  int trials_per_subspace = 0, jobs = 0, threads = 0, top = 10;
  double max_seconds = 0;
  std::optional<int64_t> seed;
  bool no_subspaces = false, quiet = false, exclude_degenerate = false;
  // What to train (over the config's keys).
  std::string arch, profiles, data, init_weights;
  std::optional<int64_t> train_limit, test_limit;
  std::optional<double> width;
  // The two-stage schedule (the config's "schedule" keys).
  std::string schedule;
  std::optional<int64_t> replicas, round, confirm_top, confirm_replicas;
  std::optional<double> top_share;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string ResumeCommand(const std::string& dataset, int64_t search_id) {
  return "xwires search --dataset " + ShellQuote(dataset) + " --resume " +
         std::to_string(search_id);
}

// The search stopped on a signal: the driver has marked it "interrupted"
// with its running trials pending. Says how to resume and exits 128 + sig.
[[noreturn]] void ReportInterrupted(const std::string& dataset, int64_t search_id,
                                    const Status& s, int sig) {
  if (search_id <= 0) {
    // Stopped before the first progress report: the driver's message names it.
    long long id = 0;
    if (std::sscanf(s.message().c_str(), "search %lld", &id) == 1) search_id = id;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "xwires: %s: %s\n", StopSignals::Name(sig).c_str(),
               s.message().c_str());
  if (search_id > 0) {
    std::fprintf(stderr, "xwires: continue with: %s\n",
                 ResumeCommand(dataset, search_id).c_str());
  }
  std::exit(128 + sig);
}

void RunSearchCommand(const SearchArgs& a) {
  SearchRequest r;
  r.config_file = a.config;
  r.dataset = a.dataset;
  r.objective = a.objective;
  r.resume = a.resume;
  r.max_trials = a.max_trials;
  r.trials_per_subspace = a.trials_per_subspace;
  r.jobs = a.jobs;
  r.threads = a.threads;
  r.max_seconds = a.max_seconds;
  r.seed = a.seed;
  r.no_subspaces = a.no_subspaces;
  r.exclude_degenerate = a.exclude_degenerate;
  r.arch = a.arch;
  r.profiles = SplitCommas(a.profiles);
  r.data = a.data;
  r.train_limit = a.train_limit;
  r.test_limit = a.test_limit;
  r.width = a.width;
  r.init_weights = a.init_weights;
  r.schedule = a.schedule;
  r.replicas = a.replicas;
  r.round = a.round;
  r.confirm_top = a.confirm_top;
  r.confirm_replicas = a.confirm_replicas;
  r.top_share = a.top_share;
  const hpo::DriverConfig config = Unwrap(SearchConfigOf(r));
  if (a.top < 0) Check(Status::InvalidArgument("--top must be >= 0"));
  hpo::DriverOptions o = Unwrap(SearchOptionsOf(r));

  std::unique_ptr<hpo::Cluster> cluster =
      Unwrap(hpo::StartMpiCluster(nullptr, nullptr));
  const bool root = cluster->rank() == 0;
  SearchProgressText progress(StderrIsTerminal(), a.quiet || !root);
  int64_t search_id = a.resume;
  o.on_progress = [&](const hpo::SearchProgress& p) {
    search_id = p.search_id;
    progress.Update(p);
  };
  o.on_message = [&](const std::string& m) { progress.Message(m); };
  // SIGINT/SIGTERM stop a one-process search between training steps (the
  // driver ignores should_stop under MPI, where mpirun handles signals).
  std::optional<StopSignals> stop;
  if (cluster->size() == 1) {
    stop.emplace();
    o.should_stop = [&stop] { return stop->received() != 0; };
  }
  auto result = hpo::RunSearch(config, o, *cluster);
  progress.Finish();
  if (stop && stop->received() != 0 && !result.ok() &&
      result.status().code() == Status::Code::kCancelled) {
    ReportInterrupted(a.dataset, search_id, result.status(), stop->received());
  }
  stop.reset();
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
    std::printf("; best %.4f (trial %lld%s)", s.best,
                static_cast<long long>(s.best_trial),
                a.exclude_degenerate ? ", degenerate trials excluded" : "");
  }
  if (s.replicas > 0) {
    std::printf("; %lld replicas trained", static_cast<long long>(s.replicas));
  }
  std::printf("\n");
  if (a.top > 0) {
    const Table top =
        Unwrap(SearchTopTable(a.dataset, s.search_id, a.top, a.exclude_degenerate));
    std::printf("most divergent pairs of search %lld:\n%s",
                static_cast<long long>(s.search_id),
                FormatTable(top, TableFormat::kTable).c_str());
  }
  if (hpo::IsTwoStage(config.schedule, config.search.objective) || a.resume > 0) {
    const SearchVerdicts v = Unwrap(SearchVerdictSummary(a.dataset, s.search_id));
    if (v.replicated > 0) {
      std::printf(
          "verdicts: %lld of %lld replicated pairs significant (%lld confirmed with fresh "
          "replicas); %lld pass Benjamini-Hochberg at q = %.2f\n",
          static_cast<long long>(v.significant), static_cast<long long>(v.replicated),
          static_cast<long long>(v.confirmed), static_cast<long long>(v.bh_rejected), v.q);
    }
  }
  std::printf("dataset: %s (continue with: %s)\n", a.dataset.c_str(),
              ResumeCommand(a.dataset, s.search_id).c_str());
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
  AddIntOption(cmd, "--resume", &args->resume, 1, kInt64Max,
               "Continue search ID of the dataset");
  AddIntOption(cmd, "--trials-per-subspace", &args->trials_per_subspace, 1, kIntMax,
               "Trials per subspace (overrides the config; allowed with --resume)");
  AddIntOption(cmd, "--max-trials", &args->max_trials, 0, kInt64Max,
               "Stop after N trials in all (0: config)");
  cmd->add_option(
      "--max-seconds", args->max_seconds,
      "Start no trial expected to end after S seconds of this run (0: config)");
  AddIntOption(cmd, "--jobs", &args->jobs, 0, kIntMax,
               "Concurrent trials per process (0: min(4, threads))");
  AddIntOption(cmd, "--threads", &args->threads, 0, kIntMax,
               "Threads per process, split between the jobs (0: cores / "
               "ranks on the node)");
  cmd->add_option("--arch", args->arch,
                  "Architecture to train (the config's \"arch\"; default "
                  "simple_cnn): mlp, simple_cnn, vgg11, vgg16, resnet20, "
                  "resnet18, resnet50, densenet121");
  cmd->add_option("--profiles", args->profiles,
                  "The two profiles compared, comma-separated (the config's "
                  "\"profiles\"; default torch,tf): shipped names or .json "
                  "files");
  cmd->add_option("--data", args->data,
                  "Training data (the config's \"data\"; default synthetic): "
                  "synthetic | cifar10:DIR | cifar100:DIR | mnist:DIR | "
                  "fashion-mnist:DIR");
  cmd->add_option("--train-limit", args->train_limit,
                  "First N training images (\"data.train_limit\"; -1: all)");
  cmd->add_option("--test-limit", args->test_limit,
                  "First N test images (\"data.test_limit\"; -1: all)");
  cmd->add_option("--width", args->width,
                  "Width multiplier when width is not searched "
                  "(\"train.width\"; default 0.5)");
  cmd->add_option("--init-weights", args->init_weights,
                  "Start both profiles of every trial from these weights "
                  "(HDF5, state_dict names; \"train.init_weights\"): only "
                  "the arithmetic differs");
  cmd->add_flag("--no-subspaces", args->no_subspaces,
                "One GP over the whole space");
  AddIntOption(cmd, "--seed", &args->seed, 0, kInt64Max,
               "Search seed (optimizer designs; overrides the config)");
  cmd->add_option("--objective", args->objective,
                  "significant_diff (default) | abs_acc_diff | disagreement | "
                  "max_class_gap (overrides the config)");
  cmd->add_option("--schedule", args->schedule,
                  "auto (default: two_stage with significant_diff) | screen | two_stage "
                  "(\"schedule.kind\")");
  AddIntOption(cmd, "--replicas", &args->replicas, kIntMin, kIntMax,
               "Replicas a side of the replicated trials, replica 0 included (>= 4; "
               "\"schedule.replicas\", default 5)");
  cmd->add_option("--top-share", args->top_share,
                  "Share of each round replicated, in (0, 1] (\"schedule.top_share\", "
                  "default 0.2)");
  AddIntOption(cmd, "--round", &args->round, kIntMin, kIntMax,
               "Proposals per selection round (\"schedule.round\", default 10)");
  AddIntOption(cmd, "--confirm-top", &args->confirm_top, kIntMin, kIntMax,
               "Final top pairs confirmed with fresh replicas (\"schedule.confirm_top\", "
               "default 2)");
  AddIntOption(cmd, "--confirm-replicas", &args->confirm_replicas, kIntMin, kIntMax,
               "Fresh replicas a side of a confirmation (>= 4; "
               "\"schedule.confirm_replicas\", default 4)");
  AddIntOption(cmd, "--top", &args->top, 0, kIntMax,
               "Rows of the final table of most divergent pairs");
  cmd->add_flag("--exclude-degenerate", args->exclude_degenerate,
                "The best pair and the final table skip trials with a "
                "collapsed or at-chance model (query fields collapsed, "
                "at_chance)");
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->callback([args] { RunSearchCommand(*args); });
}
XW_CLI_COMMAND(20, RegisterSearch);

}  // namespace
}  // namespace xw::cli
