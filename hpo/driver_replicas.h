// The two-stage schedule of a search (include/xwires/hpo/schedule.h) as the
// driver runs it on rank 0: which stored trials to replicate or confirm,
// which of their replicas still need training, storing each replica as it
// finishes and each trial's statistics once its set is complete, and the
// observation (LCB, SE^2) a replicated trial gives its GP.
//
// Everything it decides is a function of the dataset and the search's
// proposals (schedule.h), so a search resumed after kill -9 finds exactly
// the work the uninterrupted one had left: nothing is trained twice (stored
// replicas are never re-planned) and nothing is lost (a replica in flight
// when the process died is planned again).
//
// Not thread-safe: the scheduler thread of rank 0 alone uses it (the
// other ranks reach it through rank 0's Coordinator, driver_replica_sink.cc).
#ifndef XWIRES_HPO_DRIVER_REPLICAS_H_
#define XWIRES_HPO_DRIVER_REPLICAS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "driver_internal.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/trainers/replica.h"

namespace xw::hpo::internal {

// One replica to train: replica `replica` of family `family` of model
// `model` (index into the search's profile pair) of stored trial `trial_id`.
// Any rank can train it (the same bits on every rank, thread count and,
// for the exact-order profiles, SIMD target); rank 0 stores it.
struct ReplicaTask {
  int64_t trial_id = 0;
  std::vector<double> x;  // the trial's point (its training options)
  int model = 0;
  int64_t replica = 0;
  PerturbFamily family = PerturbFamily::kUlp;
  bool confirm = false;  // a confirmation replica (else a selection one)
};

// What a replicated trial tells its GP.
struct ReplicaObservation {
  double lcb = 0;      // significant_diff
  double se2 = 0;      // its noise variance
  double p_value = 1;  // permutation p (for the confirmation ranking)
};

// A replicated trial's new observation, for the rank that owns its subspace
// (subspace % ranks): its GP is rebuilt with it.
struct Retold {
  int subspace = 0;
  int64_t proposal = 0;  // the trial's proposal number (pending row's id)
  ReplicaObservation obs;
};

class TwoStage {
 public:
  // `history`: the search's rows when it (re)started. `ds` and `ctx` must
  // outlive this object.
  static Result<std::unique_ptr<TwoStage>> Create(const TrialContext& ctx, Dataset& ds,
                                                  const std::vector<HistoryEntry>& history);

  // Trial events, from the coordinator (every rank's trials).
  void OnBegin(int64_t pending_id);
  void OnFinish(int64_t pending_id, int64_t trial_id, int subspace,
                const std::vector<double>& x, double divergence);
  void OnFail(int64_t pending_id);

  // Brings the schedule up to date: stores replica 0 of newly selected trials
  // from their stored models (re-trained when the weights were not kept),
  // stores the statistics of every complete set, and queues the replicas to
  // train now (each once: they are then in flight until stored or
  // dropped). Trials whose selection statistics this call stored are
  // appended to *retold. `screening_ended`: no rank can start a proposal
  // and none is under way.
  Status Plan(bool screening_ended, std::vector<Retold>* retold);
  // The next queued replica (nullopt: none now), in planning order.
  std::optional<ReplicaTask> Next();
  // Stores a trained replica's row (ToReplicaRecord; its trial, profile
  // and family are set from `t`).
  Status Store(const ReplicaTask& t, ReplicaRecord rec, std::string* note);
  // A task that did not run (the search was stopped): planned again later.
  void Dropped(const ReplicaTask& t);

  // The selection statistics of the trial of proposal `proposal` once
  // replicated (nullopt: not replicated).
  std::optional<ReplicaObservation> ObservationOfProposal(int64_t proposal) const;
  // Every replicated trial's observation, for the ranks that resume a
  // search (their subspaces' GPs are rebuilt with them).
  std::vector<Retold> Observations() const;
  // Screening ended and every planned statistic is stored.
  bool finished() const { return finished_; }
  // Replicas queued or training on some rank.
  size_t in_flight() const { return in_flight_.size(); }
  // Replicas trained and stored by this process (replica 0 taken from a
  // trial's stored model is not counted).
  int64_t replicas_stored() const { return stored_; }

 private:
  TwoStage(const TrialContext& ctx, Dataset& ds) : ctx_(ctx), ds_(ds) {}
  using Key = std::tuple<int64_t, int, std::string, int64_t>;  // trial, model, family, r
  // Plans trial `t`'s set [first, first + k) of `family`; true once its
  // statistics are stored.
  Result<bool> Need(int64_t t, PerturbFamily family, int64_t first, int k, bool confirm,
                    std::vector<Retold>* retold);
  // Replica 0 of model m of trial t from its stored weights; false when it
  // must be trained instead.
  Result<bool> ReplicaZeroFromTrial(int64_t t, int m, const std::string& family);
  Status StoreStats(int64_t t, const std::string& family, int64_t first, int k, bool confirm,
                    std::vector<Retold>* retold);

  const TrialContext& ctx_;
  Dataset& ds_;
  std::map<int64_t, Proposal> proposals_;  // by proposal number
  struct Point {
    std::vector<double> x;
    int subspace = 0;
    int64_t proposal = 0;
  };
  std::map<int64_t, Point> points_;  // trial -> its point
  std::map<int64_t, ReplicaObservation> selection_;
  std::deque<ReplicaTask> queue_;
  std::set<int64_t> confirmed_;
  std::set<Key> in_flight_;
  int64_t stored_ = 0;
  bool finished_ = false;
};

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_DRIVER_REPLICAS_H_
