// `xwires train`: trains one architecture under several numerics profiles
// from the same data and hyperparameters, prints their test accuracies and
// the difference, and optionally writes DIR/<profile>.h5 + DIR/metrics.json
// and stores the trial in a dataset.
//
// The run itself (checks first, files only after every profile has trained)
// is xw::RunTraining (include/xwires/api/train_run.h), shared with Python.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "int_option.h"
#include "stop_signals.h"
#include "train_common.h"
#include "xwires/api/progress_text.h"
#include "xwires/api/train_run.h"

namespace xw::cli {
namespace {

struct TrainArgs {
  std::string arch = "simple_cnn", profiles = "torch,tf", data = "synthetic";
  std::string init_weights, out, dataset;
  int64_t epochs = 1, batch_size = 32, train_limit = -1, test_limit = -1, eval_batch = 256;
  double lr = 1e-3, eps = 1e-8, beta1 = 0.9, beta2 = 0.999, weight_decay = 0.0;
  ArchOptions arch_options;
  uint64_t seed = 0;
  std::optional<uint64_t> data_seed;
  int threads = 0;
  bool quiet = false;
};

void RunTrain(const TrainArgs& a) {
  TrainRequest r;
  r.arch = a.arch;
  for (const std::string& name : SplitList(a.profiles)) {
    r.profiles.push_back(Unwrap(LoadProfile(name)));
  }
  r.data = a.data;
  r.init_weights = a.init_weights;
  r.out = a.out;
  r.dataset = a.dataset;
  r.epochs = a.epochs;
  r.batch_size = a.batch_size;
  r.eval_batch_size = a.eval_batch;
  r.train_limit = a.train_limit;
  r.test_limit = a.test_limit;
  r.adam = AdamOptions{a.lr, a.beta1, a.beta2, a.eps, a.weight_decay};
  r.arch_options = a.arch_options;
  r.seed = a.seed;
  r.data_seed = a.data_seed;
  r.threads = a.threads;
  TrainProgressText progress(StderrIsTerminal(), a.quiet);
  r.on_progress = [&](const TrainProgress& tp) { progress.Update(tp); };
  // SIGINT/SIGTERM abandon the training between two steps; RunTraining then
  // writes nothing (no weights, no metrics, no trial).
  StopSignals stop;
  r.should_stop = [&stop] { return stop.received() != 0; };
  auto run = RunTraining(r);
  progress.Finish();
  if (const int sig = stop.received(); sig != 0 && !run.ok() &&
                                       run.status().code() == Status::Code::kCancelled) {
    std::fprintf(stderr, "xwires: %s: %s; nothing was written\n",
                 StopSignals::Name(sig).c_str(), run.status().message().c_str());
    std::exit(128 + sig);
  }
  const TrainOutcome o = Unwrap(std::move(run));
  const TrialRecord& trial = o.trial;

  size_t width = 0;
  for (const auto& m : trial.models) width = std::max(width, m.profile.size());
  for (const auto& m : trial.models) {
    std::printf("%-*s  test accuracy %.4f  test loss %.4f  (%s, %.1f s)\n",
                static_cast<int>(width), m.profile.c_str(), m.test_acc, m.test_loss,
                m.status.c_str(), m.wall_time_s);
  }
  if (trial.models.size() == 2) {
    std::printf("|difference| %.4f\n", std::fabs(trial.models[0].test_acc - trial.models[1].test_acc));
  } else if (trial.models.size() > 2) {
    std::printf("largest pairwise |difference| %.4f\n", trial.divergence);
  }
  if (!a.out.empty()) std::printf("wrote %s/metrics.json\n", a.out.c_str());
  if (o.trial_id >= 0) {
    std::printf("stored trial %lld in %s\n", static_cast<long long>(o.trial_id),
                a.dataset.c_str());
  }
}

void RegisterTrain(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand(
      "train", "Train one architecture under several numerics profiles and compare accuracies");
  // A repeated option takes its last value (so scripts can override).
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--arch", args->arch, "Architecture: mlp, simple_cnn, vgg11, vgg16, resnet20, "
                                        "resnet18, resnet50, densenet121")
      ->capture_default_str();
  cmd->add_option("--profiles", args->profiles,
                  "Comma-separated profiles: shipped names (torch, tf, reference) or .json files")
      ->capture_default_str();
  cmd->add_option("--data", args->data,
                  "synthetic | cifar10:DIR | cifar100:DIR | mnist:DIR | fashion-mnist:DIR")
      ->capture_default_str();
  // Integers are read without saturation; their ranges are RunTraining's
  // checks (shared with Python), except the seed's, which the store holds as
  // a signed 64-bit integer.
  AddIntOption(cmd, "--epochs", &args->epochs, kInt64Min, kInt64Max, "Epochs (>= 1)");
  AddIntOption(cmd, "--batch-size", &args->batch_size, kInt64Min, kInt64Max,
               "Batch size (>= 1; last partial batch kept)");
  cmd->add_option("--lr", args->lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--adam-eps", args->eps, "Adam epsilon (each profile applies it its own way)")
      ->capture_default_str();
  cmd->add_option("--beta1", args->beta1, "Adam beta1")->capture_default_str();
  cmd->add_option("--beta2", args->beta2, "Adam beta2")->capture_default_str();
  cmd->add_option("--weight-decay", args->weight_decay, "Weight decay (mode per profile)")
      ->capture_default_str();
  cmd->add_option("--width", args->arch_options.width, "Width multiplier")->capture_default_str();
  AddIntOption(cmd, "--depth", &args->arch_options.depth, kIntMin, kIntMax,
               "mlp hidden layers / resnet20 depth 6n+2 (0: default)");
  cmd->add_option("--dropout", args->arch_options.dropout, "vgg classifier dropout")
      ->capture_default_str();
  AddIntOption(cmd, "--train-limit", &args->train_limit, kInt64Min, kInt64Max,
               "Use the first N training images (-1: all)");
  AddIntOption(cmd, "--test-limit", &args->test_limit, kInt64Min, kInt64Max,
               "Use the first N test images (-1: all)");
  // Seeds are stored as SQLite integers: at most 2^63 - 1.
  AddIntOption(cmd, "--seed", &args->seed, 0, kInt64Max,
               "Seed of init, dropout, shuffling (and of the synthetic data unless "
               "--data-seed is given)");
  cmd->add_option("--data-seed", args->data_seed,
                  "Seed of the synthetic data (default: --seed); recorded with the run");
  AddIntOption(cmd, "--threads", &args->threads, kIntMin, kIntMax,
               "Threads per training (0: all cores)");
  AddIntOption(cmd, "--eval-batch-size", &args->eval_batch, kInt64Min, kInt64Max,
               "Batch size of test evaluation");
  cmd->add_option("--init-weights", args->init_weights,
                  "Start every profile from these weights (HDF5, state_dict names)");
  cmd->add_option("--out", args->out, "Write <profile>.h5 and metrics.json to this directory");
  cmd->add_option("--dataset", args->dataset, "Also store the trial in this dataset directory");
  cmd->add_flag("--quiet", args->quiet, "No progress output");
  cmd->callback([args] { RunTrain(*args); });
}
XW_CLI_COMMAND(10, RegisterTrain);

}  // namespace
}  // namespace xw::cli
