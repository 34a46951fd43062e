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
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "driver_internal.h"
#include "driver_store.h"

namespace xw::hpo::internal {

// Message tags between ranks.
enum Tag : int {
  kTagBegin = 1,
  kTagBeginReply,
  kTagFinish,
  kTagFail,
  kTagRankDone
};

// ---- worker pool (driver_pool.cc)
// ------------------------------------------------

struct Job {
  int64_t pending_id = 0;
  int subspace = 0;
  std::vector<double> x;
};
struct JobResult {
  Job job;
  Result<TrialRecord> record = Status::Internal("not run");
  double seconds = 0;
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
};

struct Budget {
  int trials_per_subspace = 0;
  int64_t max_trials = 0;  // 0: none
  double max_seconds = 0;  // 0: none; this run only (see Coordinator::Begin)
  int subspaces = 1;
  // The number of trials the budget allows.
  int64_t Planned() const;
};

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

  int64_t finished() const { return finished_; }
  int64_t failed() const { return failed_; }
  double best() const { return best_; }
  int64_t best_trial() const { return best_trial_; }
  bool budget_cut() const { return budget_cut_; }

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
};

// Rank r > 0: forwards events to rank 0.
class RemoteSink final : public TrialSink {
 public:
  explicit RemoteSink(Cluster& cluster) : cluster_(cluster) {}
  Result<int64_t> Begin(int subspace, const std::vector<double>& x,
                        int threads,
                        const std::string& optimizer_state) override;
  Status Finish(const Job& job, TrialRecord r, double seconds) override;
  Status Fail(const Job& job, const std::string& message,
              double seconds) override;
  // Tells rank 0 that this rank has finished.
  void Done();

 private:
  Cluster& cluster_;
};

// ---- scheduler (driver.cc)
// ---------------------------------------------------------

// Runs the subspaces s with s % ranks == rank: replays `history`, re-trains
// its pending points, then asks for new points until the budget is spent,
// `jobs` trials at a time with `threads` threads in all. Cancelled when the
// sink asked to stop; the trials it stopped keep their pending rows.
Status RunRank(const TrialContext& ctx,
               const std::vector<HistoryEntry>& history, const Budget& budget,
               int rank, int ranks, int jobs, int threads, TrialSink& sink);

// Threads of each of `jobs` concurrent trials sharing `threads` threads.
std::vector<int> SplitThreads(int threads, int jobs);

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_DRIVER_RUN_H_
