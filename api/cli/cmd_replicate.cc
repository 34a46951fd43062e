// `xwires replicate DATASET (TRIALS | --top N | --where FILTER)`: K replicas
// of every profile of the chosen trials, stored as they finish, and each
// pair's statistics and verdict (xw::RunReplicate, docs/significance.md).
// Progress with ETA on stderr; the verdict table on stdout. Run it again
// after a crash or kill: only the missing replicas are trained. Under mpirun
// (`mpirun -n 4 xwires replicate ...`) the ranks share the replicas and rank
// 0 stores them.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "train_common.h"
#include "xwires/api/progress_text.h"
#include "xwires/api/replicate_run.h"
#include "xwires/hpo/search_driver.h"

namespace xw::cli {
namespace {

struct ReplicateArgs {
  std::string dataset, trials, where, perturb = "seed";
  int64_t top = 0;
  int replicas = 5, jobs = 1, threads = 0;
  bool store_weights = false, quiet = false;
};

std::vector<int64_t> ParseTrialList(const std::string& text) {
  std::vector<int64_t> ids;
  for (const std::string& item : SplitList(text)) {
    size_t used = 0;
    long long id = 0;
    try {
      id = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || id <= 0) {
      Check(Status::InvalidArgument("TRIALS: '" + item + "' is not a trial id"));
    }
    ids.push_back(id);
  }
  return ids;
}

void RunReplicateCommand(const ReplicateArgs& a) {
  ReplicateRequest r;
  r.dataset = a.dataset;
  r.trials = ParseTrialList(a.trials);
  r.top = a.top;
  r.where = a.where;
  r.replicas = a.replicas;
  r.perturb = a.perturb;
  r.jobs = a.jobs;
  r.threads = a.threads;
  r.store_weights = a.store_weights;
  // Under mpirun the ranks share the replicas, as the search's ranks share
  // its subspaces; without it this is one rank.
  std::unique_ptr<hpo::Cluster> cluster = Unwrap(hpo::StartMpiCluster(nullptr, nullptr));
  r.cluster = cluster.get();
  const bool root = cluster->rank() == 0;
  const bool tty = StderrIsTerminal();
  r.on_progress = [&](const ReplicateRequest::Progress& p) {
    if (a.quiet || !root) return;
    const std::string rank =
        cluster->size() > 1 ? " (rank " + std::to_string(p.rank) + ")" : "";
    std::fprintf(stderr, "%sreplica %lld/%lld: trial %lld %s r=%lld%s | %s elapsed, ETA %s%s",
                 tty ? "\r" : "", static_cast<long long>(p.done),
                 static_cast<long long>(p.total), static_cast<long long>(p.trial_id),
                 p.profile.c_str(), static_cast<long long>(p.replica), rank.c_str(),
                 DurationText(p.elapsed_s).c_str(), DurationText(p.eta_s).c_str(),
                 tty ? "   " : "\n");
    std::fflush(stderr);
  };
  auto result = RunReplicate(r);
  if (!root) {
    // Rank 0 reports (and the exit code carries) whatever went wrong.
    const int code = result.ok() ? 0 : CliError(result.status()).exit_code();
    cluster.reset();
    std::exit(code);
  }
  cluster.reset();
  const ReplicateSummary s = Unwrap(std::move(result));
  if (tty && !a.quiet && s.trained > 0) std::fprintf(stderr, "\n");
  std::printf("%lld replicas trained, %lld already stored; %zu trials, %s family, K = %d\n",
              static_cast<long long>(s.trained), static_cast<long long>(s.skipped),
              s.trial_ids.size(), a.perturb.c_str(), a.replicas);
  std::printf("%6s  %-10s %-10s %8s %8s %8s %8s %8s  %s\n", "trial", "profile_a", "profile_b",
              "mean_a", "mean_b", "diff", "p_value", "diff_lcb", "verdict");
  for (const ReplicaStatsRecord& x : s.stats) {
    std::printf("%6lld  %-10s %-10s %8.4f %8.4f %+8.4f %8.4f %8.4f  %s\n",
                static_cast<long long>(x.trial_id), x.profile_a.c_str(), x.profile_b.c_str(),
                x.stats.a.mean, x.stats.b.mean, x.stats.mean_diff, x.stats.permutation_p,
                x.stats.lcb, stats::VerdictName(x.stats.verdict));
  }
  // Why the spread guard made a pair insufficient (ulp/order replicas that
  // did not spread); on stderr, so stdout stays one table row per pair.
  for (const ReplicaStatsRecord& x : s.stats) {
    if (x.stats.verdict_reason.empty()) continue;
    std::fprintf(stderr, "trial %lld %s vs %s: insufficient: %s\n",
                 static_cast<long long>(x.trial_id), x.profile_a.c_str(), x.profile_b.c_str(),
                 x.stats.verdict_reason.c_str());
  }
}

void RegisterReplicate(CLI::App& app) {
  auto args = std::make_shared<ReplicateArgs>();
  auto* cmd = app.add_subcommand(
      "replicate",
      "Train K replicas of every profile of stored trials and judge each pair's difference "
      "against the noise floor");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("DATASET", args->dataset, "Dataset directory")->required();
  cmd->add_option("TRIALS", args->trials, "Comma-separated trial ids");
  cmd->add_option("--top", args->top, "The N most divergent trials");
  cmd->add_option("--where", args->where, "Every trial matching this filter (see `query`)");
  cmd->add_option("--replicas", args->replicas,
                  "Replicas per profile, replica 0 (the trial as trained) included; >= 4")
      ->capture_default_str();
  cmd->add_option("--perturb", args->perturb,
                  "Perturbation of replicas r >= 1: seed (a fresh training seed, same "
                  "data; calibrated), ulp (one first-layer weight moved by one ulp) or "
                  "order (another reduction order of the same framework); ulp and order "
                  "keep the trial's initial draw, and a pair whose replicas did not "
                  "spread gets `insufficient`")
      ->capture_default_str();
  cmd->add_option("--jobs", args->jobs, "Replicas trained at once")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads in all (0: every core)")
      ->capture_default_str();
  cmd->add_flag("--store-weights", args->store_weights, "Keep every replica's weights");
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->callback([args] { RunReplicateCommand(*args); });
}
XW_CLI_COMMAND(35, RegisterReplicate);

}  // namespace
}  // namespace xw::cli
