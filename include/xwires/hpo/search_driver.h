// The divergence search driver behind `xwires search` (docs/search.md,
// docs/cluster.md): GP optimisers over HyperSpace subspaces (optimizer.h,
// search_config.h) proposing hyperparameters, each trial training one
// architecture under two numerics profiles and measuring how far apart they
// end up, every event recorded in a living dataset as it happens.
//
// Configuration. A DriverConfig is a SearchConfig plus the fixed training
// settings of its "train" object:
//   "train": {"width": 0.5, "depth": 0, "dropout": 0.5, "seed": 0,
//             "data_seed": null,
//             "lr": 1e-3, "adam_eps": 1e-8, "beta1": 0.9, "beta2": 0.999,
//             "weight_decay": 0, "batch_size": 32, "epochs": 1,
//             "eval_batch_size": 256, "store_weights": true,
//             "init_weights": null}
// A hyperparameter that is a search dimension takes the suggested value; the
// others take these. "init_weights": an HDF5 weights file (state_dict
// names, as `xwires train --init-weights`) that both profiles of every trial
// start from instead of their own initialisers, so that only the arithmetic
// differs; every rank reads it; width cannot be a search dimension with it.
// "schedule": the two-stage schedule of objective significant_diff
// (hpo/schedule.h lists its keys and defaults).
// Searchable dimension names: lr, adam_eps, beta1, beta2,
// weight_decay, batch_size, epochs (integer dimensions), width, dropout.
// Every key of a config document is optional; missing keys take the values
// of DefaultDriverConfig() (the 5-minute default search), not those of
// SearchConfig{}.
//
// Recording and resume. Every suggested point becomes a "pending" trial row
// before training starts, then a finished trial (AddTrial, divergence = the
// objective) or a "failed" row (search_log.h). The optimisers hold no state
// of their own: a resumed search rebuilds them by telling each subspace's
// finished trials in the order they finished, re-trains the pending points of
// the crashed run under their recorded rows, and carries on. Failed points
// count against the budget and are never suggested again.
//
// Parallelism. A process runs `jobs` trials at once on worker threads, each
// training its pair with threads/jobs threads (xw::ThreadScope). Under MPI,
// subspace s belongs to rank s % R (every rank takes several when R < 2^D; a
// rank with none only forwards nothing), and rank 0 is the only process that
// touches the dataset: the other ranks send it their pending/finished/failed
// events (rank 0 gathers). Rank 0 also enforces the global budget.
//
// Thread-safety: RunSearch is called once per process, from the thread that
// initialised MPI.
#ifndef XWIRES_HPO_SEARCH_DRIVER_H_
#define XWIRES_HPO_SEARCH_DRIVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/hpo/schedule.h"
#include "xwires/hpo/search_config.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/optimizer.h"

namespace xw::hpo {

// Training settings that are not searched.
struct TrainSettings {
  ArchOptions arch_options;  // width, depth, dropout
  AdamOptions adam;          // lr, beta1, beta2, eps, weight_decay
  int64_t batch_size = 32;
  int64_t epochs = 1;
  uint64_t seed = 0;  // init, dropout and shuffle seed of every trial
  // Seed of the synthetic data; nullopt (JSON null, the default): `seed`.
  std::optional<uint64_t> data_seed;
  int64_t eval_batch_size = 256;
  bool store_weights = true;  // keep both models' weights in the dataset
  // Weights file both profiles start from ("": each its own initialiser).
  std::string init_weights;
};

struct DriverConfig {
  SearchConfig search;
  TrainSettings train;
  ScheduleOptions schedule;  // the "schedule" object (hpo/schedule.h)
};

// The configuration of `xwires search` with no arguments (docs/search.md
// lists and explains every value): simple_cnn at width 0.5 on 2000/1000
// synthetic images, torch vs tf, objective significant_diff with the
// two-stage schedule, the Table 1 space with epochs scaled to [1, 5] and
// batch_size to [10, 400] (log), 16 subspaces x 3 screened trials, 2 initial
// points per subspace, at most 200 s of new screened trials.
DriverConfig DefaultDriverConfig();

// Parses a config document (search_config.h keys plus "train"), missing keys
// taken from DefaultDriverConfig(). InvalidArgument names the key path;
// dimensions must be searchable names (above) with integer types for
// batch_size and epochs.
Result<DriverConfig> ParseDriverConfigJson(const std::string& text);
// Reads and parses a file (NotFound / IOError name the path).
Result<DriverConfig> LoadDriverConfig(const std::string& path);
// Canonical JSON (every key); ParseDriverConfigJson round-trips it. This is
// what the searches table stores.
std::string DriverConfigToJson(const DriverConfig& c);

// Process topology and message passing for a distributed search. The MPI
// implementation is created by StartMpiCluster; LocalCluster() is one rank.
// Used only from the thread that created it.
class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks on this node (sharing its cores).
  virtual int local_size() const = 0;
  // Rank 0's *bytes replace every other rank's.
  virtual void Broadcast(std::string* bytes) = 0;
  virtual void Send(int dest, int tag, const std::string& bytes) = 0;
  // Blocks (sleeping, not spinning) until a message from `source` with `tag`.
  virtual std::string Recv(int source, int tag) = 0;
  // A waiting message from any rank with any tag, if there is one.
  virtual bool TryRecv(int* source, int* tag, std::string* bytes) = 0;
  // Waits (sleeping) for every rank.
  virtual void Barrier() = 0;
  // Ends every rank's process with `code` (a failed rank must not leave the
  // others waiting).
  [[noreturn]] virtual void Abort(int code) = 0;
};

std::unique_ptr<Cluster> LocalCluster();

// Initialises MPI (MPI_Init_thread, FUNNELED; a singleton without mpirun)
// unless the environment variable XWIRES_NO_MPI is set to a non-empty value
// other than "0", in which case it returns LocalCluster(). The cluster
// finalises MPI when destroyed. Internal if MPI cannot be initialised.
Result<std::unique_ptr<Cluster>> StartMpiCluster(int* argc, char*** argv);

// Progress of a search, reported by rank 0 after every finished or failed
// trial, and about once a second in between with trial_id 0 (counts include
// trials of earlier runs of a resumed search).
struct SearchProgress {
  int64_t search_id = 0;
  int64_t finished = 0, failed = 0, running = 0;
  int64_t planned =
      0;             // the number the budget allows, at most subspaces x trials
  double best = -1;  // best objective so far (-1: none yet)
  int64_t best_trial = 0;
  double elapsed_s = 0, eta_s = -1;  // this run; eta -1 = unknown
  // The trial that just ended (0: a periodic update, no trial ended).
  int64_t trial_id = 0;
  int subspace = 0;
  bool trial_failed = false;
  std::string trial_text;  // "lr=0.001 epochs=3 ... -> 0.2340" or the failure
};

struct DriverOptions {
  std::string dataset_dir = "xwires-data";  // created if missing (rank 0)
  std::optional<int64_t> resume_id;  // continue this search of the dataset
  // Budget overrides for this run (also allowed with resume): <= 0 = keep.
  int trials_per_subspace = 0;
  int64_t max_trials = 0;
  double max_seconds = 0;
  int jobs = 0;  // concurrent trials per process; 0 = min(4, threads)
  int threads =
      0;  // threads per process; 0 = hardware threads / ranks on the node
  std::function<void(const SearchProgress&)> on_progress;  // rank 0 only
  std::function<void(const std::string&)> on_message;  // rank 0: start-up facts
  // Polled by a one-process search (ignored under MPI with several ranks)
  // about ten times a second. When it returns true no trial starts any more,
  // running trials stop between batches and keep their pending rows, the
  // search's status becomes "interrupted" and RunSearch returns Cancelled:
  // resuming re-trains those points, exactly as after a crash (Ctrl-C from
  // Python uses it).
  std::function<bool()> should_stop;
  // The best pair (SearchProgress / SearchSummary best, best_trial) skips
  // trials with a collapsed or at-chance model (xwires/dataset/store/
  // degenerate.h); the optimizer still sees every objective. Default: off.
  bool best_excludes_degenerate = false;
};

struct SearchSummary {
  int64_t search_id = 0;
  std::string status;  // done | stopped (budget cut it short)
  int64_t finished = 0, failed = 0;
  double best = -1;
  int64_t best_trial = 0;
  int64_t replicas = 0;  // replicas stored by this run (two-stage schedule)
  bool is_root = true;  // false on MPI ranks other than 0 (fields unset)
};

// Runs (or resumes) a search on every rank of `cluster`; see the header
// comment. With resume_id the config comes from the dataset and `config` is
// ignored. Errors: bad config or options (InvalidArgument), no such search
// (NotFound), dataset and data errors as their modules report them, and
// Cancelled when options.should_stop stopped it.
Result<SearchSummary> RunSearch(const DriverConfig& config,
                                const DriverOptions& options, Cluster& cluster);

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SEARCH_DRIVER_H_
