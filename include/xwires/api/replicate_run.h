// `xwires replicate`: K replicas of every profile of stored trials, stored
// in the dataset one by one, then each profile pair's statistics and verdict
// (docs/significance.md). Shared by the CLI and the Python package.
//
// Every input is checked before anything is written (K, the family, the
// trials, the filter, the family against every profile): a bad request
// leaves the dataset untouched (it is opened read-only for the checks). The
// replicas then train on `jobs` worker threads (threads / jobs threads each,
// as the search does); the calling thread stores each one as soon as it is
// done (atomically: its HDF5 file, then its row), so a killed run loses at
// most the replicas in flight, and running the same request again trains
// only the missing ones: nothing is repeated and nothing is lost. A trial's
// statistics are (re)computed once all its replicas are stored.
//
// Thread-safety: RunReplicate may run concurrently with distinct requests
// on distinct datasets; callbacks run on the calling thread.
#ifndef XWIRES_API_REPLICATE_RUN_H_
#define XWIRES_API_REPLICATE_RUN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {

namespace hpo {
class Cluster;  // xwires/hpo/search_driver.h
}

struct ReplicateRequest {
  std::string dataset;          // an existing dataset directory
  // The trials: exactly one of ids, top (> 0) and where.
  std::vector<int64_t> trials;  // these ids
  int64_t top = 0;              // the `top` most divergent trials
  std::string where;            // every trial matching this filter (query.h)
  int replicas = 5;             // K per profile, replica 0 included; >= 4
  std::string perturb = "seed";  // seed | ulp | order (docs/significance.md)
  int jobs = 1;                 // replicas trained at once (>= 1)
  int threads = 0;              // threads in all (0: every core)
  bool store_weights = false;   // keep each replica's weights
  // MPI ranks (hpo::StartMpiCluster) sharing the work, as the search does:
  // rank 0 checks, plans, trains on its `jobs` workers and stores every
  // replica; every other rank loads the trials read-only (the dataset must
  // be reachable at the same path) and trains one job at a time as rank 0
  // hands them out. Threads are split among the ranks of a node. nullptr or
  // one rank: no MPI. Not owned.
  hpo::Cluster* cluster = nullptr;
  // After every stored replica, on the calling thread.
  struct Progress {
    int64_t done = 0, total = 0;  // replicas trained in this run / to train
    int64_t skipped = 0;          // already stored when the run started
    int64_t trial_id = 0, replica = 0;
    std::string profile;
    int rank = 0;  // the MPI rank that trained it
    double elapsed_s = 0, eta_s = 0;
  };
  std::function<void(const Progress&)> on_progress;
  // Polled between replicas and inside trainings; true stops the run after
  // storing what is finished (Cancelled).
  std::function<bool()> should_stop;
};

struct ReplicateSummary {
  std::vector<int64_t> trial_ids;  // the selected trials, in order
  int64_t trained = 0, skipped = 0;
  std::vector<ReplicaStatsRecord> stats;  // every pair of every trial
  double wall_s = 0;
};

// The smallest K: with 3 + 3 replicas the smallest exact two-sided
// permutation p is 2/20 = 0.1.
inline constexpr int kMinReplicas = 4;

// Checks, trains, stores. Errors name the option as the CLI spells it
// ("--replicas: ...", "--perturb: ...", "trial 12: ...", "--where: ...").
// Under MPI every rank calls it; rank 0's summary is the run's (the others'
// hold the trial ids and what they trained), and rank 0's errors reach every
// rank.
Result<ReplicateSummary> RunReplicate(const ReplicateRequest& request);

}  // namespace xw

#endif  // XWIRES_API_REPLICATE_RUN_H_
