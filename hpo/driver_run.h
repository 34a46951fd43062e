// Running a search inside one rank: the worker pool that trains pairs, the
// sink that receives a rank's trial events (rank 0's Coordinator, which owns
// the dataset and the global budget, or RemoteSink, which forwards them to
// rank 0), and RunRank, the scheduler that asks the GP optimisers of the
// rank's subspaces for points. Internal to the hpo module.
#ifndef XWIRES_HPO_DRIVER_RUN_H_
#define XWIRES_HPO_DRIVER_RUN_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "driver_internal.h"
#include "driver_replicas.h"
#include "driver_store.h"

namespace xw::hpo::internal {

// Message tags between ranks.
enum Tag : int {
  kTagBegin = 1,
  kTagBeginReply,
  kTagFinish,
  kTagFail,
  kTagRankDone,
  // The two-stage schedule (driver_replica_sink.cc).
  kTagScreenDone,     // rank r > 0 can start no more proposals, none runs
  kTagWantReplica,    // rank r > 0 has an idle worker
  kTagReplicaReply,   // rank 0: a replica task, none now, or none ever
  kTagReplicaResult,  // rank r > 0: a trained replica (or its error)
  kTagRetell          // rank 0: a replicated trial's observation
};

// ---- worker pool (driver_pool.cc)
// ------------------------------------------------

struct Job {
  int64_t pending_id = 0;
  int subspace = 0;
  std::vector<double> x;
  // Set for a replica of the two-stage schedule (then only it counts).
  std::optional<ReplicaTask> replica;
};
struct JobResult {
  Job job;
  Result<TrialRecord> record = Status::Internal("not run");
  Result<ReplicaResult> replica = Status::Internal("not run");  // replica jobs
  double seconds = 0;
  // CPU time of the worker thread (CLOCK_THREAD_CPUTIME_ID): the job's
  // whole CPU cost when it trains with one thread (ParallelFor then runs
  // inline); its share on the worker thread otherwise.
  double cpu_seconds = 0;
};

// `slot_threads.size()` worker threads; slot k trains with slot_threads[k]
// threads. All methods are called from one (the scheduler's) thread.
class WorkerPool {
 public:
  WorkerPool(const TrialContext& ctx, std::vector<int> slot_threads);
  ~WorkerPool();  // waits for running trials
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // An idle slot, or -1.
  int IdleSlot() const;
  int threads(int slot) const { return slot_threads_[slot]; }
  // Submitted jobs whose result Wait() has not returned yet.
  int running() const { return outstanding_; }
  void Submit(int slot, Job job);
  // A finished job, waiting at most `timeout` for one.
  std::optional<JobResult> Wait(std::chrono::milliseconds timeout);
  // Running and later trials stop between batches with a Cancelled result.
  void Cancel() { cancel_ = true; }

 private:
  struct Slot;
  void Work(int slot);

  const TrialContext& ctx_;
  std::vector<int> slot_threads_;
  mutable std::mutex mu_;
  std::condition_variable
      cv_;  // slots wait for jobs, the scheduler for results
  std::vector<std::optional<Job>> jobs_;
  std::vector<bool> busy_;
  std::deque<JobResult> results_;
  bool shutdown_ = false;
  int outstanding_ = 0;  // scheduler thread only
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> threads_;
};

// ---- sinks (driver_coordinator.cc)
// --------------------------------------------------

class TrialSink {
 public:
  virtual ~TrialSink() = default;
  // Records a pending trial; its id, or -1 when the budget is spent (start
  // no more trials). optimizer_state: the subspace optimizer's state after
  // proposing x (OptimizerStateJson), stored with the trial.
  virtual Result<int64_t> Begin(int subspace, const std::vector<double>& x,
                                int threads,
                                const std::string& optimizer_state) = 0;
  virtual Status Finish(const Job& job, TrialRecord r, double seconds) = 0;
  virtual Status Fail(const Job& job, const std::string& message,
                      double seconds) = 0;
  // Rank 0 serves the other ranks' messages here.
  virtual Status Serve() { return Status::OK(); }
  // Called about once a second while trials run (rank 0 refreshes the
  // progress display).
  virtual void Tick() {}
  // True when no other rank still needs this one (rank 0: all have finished).
  virtual bool OthersDone() const { return true; }
  // Whether Serve must be called regularly (the scheduler then polls).
  virtual bool needs_polling() const { return false; }
  // Whether the caller can interrupt the search (DriverOptions::should_stop
  // on a one-rank search), and whether it asks to now.
  virtual bool stoppable() const { return false; }
  virtual bool StopRequested() { return false; }
  // A line of progress that is not a trial (a stored replica).
  virtual void Note(const std::string&) {}
  // The worker CPU time of a job of this rank that ended (a screened pair
  // or a replica), for the cost breakdown of a two-stage search.
  virtual void Account(const Job&, double /*cpu_seconds*/) {}

  // ---- the two-stage schedule (driver_replica_sink.cc); without one a
  // sink has no replica work.
  // Brings the schedule up to date. `screening_ended`: this rank can start
  // no more proposals and has none under way. Appends to *retold the new
  // observations of replicated trials of this rank's subspaces.
  virtual Status UpdateReplicas(bool /*screening_ended*/, std::vector<Retold>* /*retold*/) {
    return Status::OK();
  }
  // A replica for an idle worker of this rank (nullopt: none now).
  virtual Result<std::optional<ReplicaTask>> TakeReplica() {
    return std::optional<ReplicaTask>();
  }
  // A replica this rank trained (Cancelled: stopped, planned again later).
  virtual Status ReplicaDone(const ReplicaTask&, Result<ReplicaResult>, double) {
    return Status::Internal("a replica ran without a two-stage schedule");
  }
  // True once this rank will be given no more replica work.
  virtual bool ReplicasDone() const { return true; }
  // The observation of the trial of proposal `proposal` once replicated.
  virtual std::optional<ReplicaObservation> Observation(int64_t /*proposal*/) const {
    return std::nullopt;
  }
};

struct Budget {
  int trials_per_subspace = 0;
  int64_t max_trials = 0;  // 0: none
  double max_seconds = 0;  // 0: none; this run only (see Coordinator::Begin)
  int subspaces = 1;
  // The number of trials the budget allows.
  int64_t Planned() const;
};

// The first lines of progress of a search (o.on_message): its size, ranks,
// jobs and threads, and what a resumed search found.
void StartMessage(const SearchStore& store, const Budget& b, const DriverOptions& o, int ranks,
                  int jobs, const std::vector<int>& split);

class Coordinator final : public TrialSink {
 public:
  Coordinator(SearchStore& store, Cluster& cluster, const Budget& budget,
              const DriverOptions& options);
  Result<int64_t> Begin(int subspace, const std::vector<double>& x,
                        int threads,
                        const std::string& optimizer_state) override;
  Status Finish(const Job& job, TrialRecord r, double seconds) override;
  Status Fail(const Job& job, const std::string& message,
              double seconds) override;
  Status Serve() override;
  void Tick() override;
  bool OthersDone() const override {
    return ranks_done_ >= cluster_.size() - 1;
  }
  bool needs_polling() const override { return cluster_.size() > 1; }
  bool stoppable() const override {
    return cluster_.size() == 1 && static_cast<bool>(options_.should_stop);
  }
  bool StopRequested() override { return stoppable() && options_.should_stop(); }
  void Note(const std::string& text) override {
    if (options_.on_message) options_.on_message(text);
  }
  // The two-stage schedule to tell about every trial event (null: none).
  void set_two_stage(TwoStage* plan) { plan_ = plan; }
  Status UpdateReplicas(bool screening_ended, std::vector<Retold>* retold) override;
  Result<std::optional<ReplicaTask>> TakeReplica() override;
  Status ReplicaDone(const ReplicaTask& t, Result<ReplicaResult> r, double seconds) override;
  bool ReplicasDone() const override { return plan_ == nullptr || plan_->finished(); }
  std::optional<ReplicaObservation> Observation(int64_t proposal) const override {
    return plan_ == nullptr ? std::nullopt : plan_->ObservationOfProposal(proposal);
  }

  int64_t finished() const { return finished_; }
  int64_t failed() const { return failed_; }
  double best() const { return best_; }
  int64_t best_trial() const { return best_trial_; }
  bool budget_cut() const { return budget_cut_; }
  void Account(const Job& job, double cpu_seconds) override;
  // "worker CPU time: ..." of rank 0's jobs: the screening's against the
  // replicas' (driver_replica_sink.cc).
  std::string CostLine() const;

 private:
  double Elapsed() const;
  void Report(const Job& job, int64_t trial_id, bool failed,
              const std::string& text);

  SearchStore& store_;
  Cluster& cluster_;
  Budget budget_;
  const DriverOptions& options_;
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
  int64_t started_ = 0, finished_ = 0, failed_ = 0, running_ = 0;
  int64_t ended_this_run_ = 0;
  double trial_seconds_ = 0;  // sum over this run's ended trials
  double best_ = -1;
  int64_t best_trial_ = 0;
  bool budget_cut_ = false;
  std::chrono::steady_clock::time_point last_tick_ = start_;
  int ranks_done_ = 0;
  TwoStage* plan_ = nullptr;
  // The two-stage schedule's view of the screening (driver_replica_sink.cc).
  Status ServeReplicas(int source, int tag, const std::string& bytes);
  Status StoreReplica(const ReplicaTask& t, Result<ReplicaResult> r, double seconds,
                      const std::string& rank_note);
  Status StoreRecord(const ReplicaTask& t, ReplicaRecord rec, double seconds,
                     const std::string& rank_note);
  double cpu_[3] = {0, 0, 0};   // screening, selection, confirmation
  int64_t jobs_[3] = {0, 0, 0};
  int screens_done_ = 0;        // ranks r > 0 whose screening ended
  bool plan_dirty_ = true;      // an event since the last Plan
  bool planned_ended_ = false;  // screening_ended of the last Plan
};

// Rank r > 0: forwards events to rank 0.
class RemoteSink final : public TrialSink {
 public:
  // `two_stage`: the search replicates; `observations`: rank 0's replicated
  // trials when the search started (a resumed search's).
  RemoteSink(Cluster& cluster, int rank, int ranks, bool two_stage,
             const std::vector<Retold>& observations);
  Result<int64_t> Begin(int subspace, const std::vector<double>& x,
                        int threads,
                        const std::string& optimizer_state) override;
  Status Finish(const Job& job, TrialRecord r, double seconds) override;
  Status Fail(const Job& job, const std::string& message,
              double seconds) override;
  // Tells rank 0 that this rank has finished.
  void Done();
  bool needs_polling() const override { return two_stage_; }
  Status UpdateReplicas(bool screening_ended, std::vector<Retold>* retold) override;
  Result<std::optional<ReplicaTask>> TakeReplica() override;
  Status ReplicaDone(const ReplicaTask& t, Result<ReplicaResult> r, double seconds) override;
  bool ReplicasDone() const override { return !two_stage_ || no_more_replicas_; }
  std::optional<ReplicaObservation> Observation(int64_t proposal) const override;

 private:
  Cluster& cluster_;
  int rank_ = 0, ranks_ = 1;
  bool two_stage_ = false;
  bool screen_done_sent_ = false, no_more_replicas_ = false;
  std::chrono::steady_clock::time_point next_ask_{};  // after a "none now"
  std::map<int64_t, ReplicaObservation> observations_;  // by proposal
};

// ---- what the GPs are told (driver.cc)

// A finished trial of a subspace, in the order trials finished.
struct ToldTrial {
  int64_t proposal = 0;  // its proposal number (pending row's id); 0: unknown
  std::vector<double> x;
  double divergence = 0;  // raw, K = 1
};
// The selection statistics of a proposal's replicated trial (nullopt: not
// replicated).
using ObservationOf = std::function<std::optional<ReplicaObservation>(int64_t proposal)>;
// Tells `opt` a finished trial: y = -LCB with SE^2 as its own noise variance
// once `obs` has its statistics, else y = -divergence with the shared
// (fitted, homoscedastic) noise.
void TellTrial(GpOptimizer& opt, const ToldTrial& t, const ObservationOf& obs);
// Subspace `subspace`'s optimiser built afresh from its trials in finishing
// order, each told its current observation: what a resumed search builds,
// and what a live one rebuilds when a trial's statistics arrive.
Result<GpOptimizer> RebuildOptimizer(const SearchConfig& sc, int subspace,
                                     const std::vector<ToldTrial>& told,
                                     const ObservationOf& obs);

// ---- the two-stage schedule across ranks (driver_replica_sink.cc)

// Rank 0's schedule of a two-stage search, built from the stored trials,
// replicas and statistics; announces it through o.on_message.
Result<std::unique_ptr<TwoStage>> StartTwoStage(const TrialContext& ctx, SearchStore& store,
                                                const DriverOptions& o, int ranks);
// The observations rank 0 sends with a search's history.
void EncodeObservations(const std::vector<Retold>& obs, ByteWriter& w);
Status DecodeObservations(ByteReader& r, std::vector<Retold>* obs);

// ---- scheduler (driver.cc)
// ---------------------------------------------------------

// Runs the subspaces s with s % ranks == rank: replays `history`, re-trains
// its pending points, then asks for new points until the budget is spent,
// `jobs` trials at a time with `threads` threads in all. Cancelled when the
// sink asked to stop; the trials it stopped keep their pending rows.
// Under a two-stage schedule (the sink's replica work) the replicas share
// every rank's workers, ahead of new proposals, as soon as their round's
// selection is known; each replicated trial is re-told to its subspace's GP
// (on the rank that owns it) with its LCB and SE^2 (the optimiser is rebuilt
// from the subspace's trials in finishing order, each told its current
// observation), and the rank returns once the sink has no replica work left.
Status RunRank(const TrialContext& ctx,
               const std::vector<HistoryEntry>& history, const Budget& budget,
               int rank, int ranks, int jobs, int threads, TrialSink& sink);

// Threads of each of `jobs` concurrent trials sharing `threads` threads.
std::vector<int> SplitThreads(int threads, int jobs);

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_DRIVER_RUN_H_
