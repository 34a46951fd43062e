// Internal: the jobs of a replicate run (replicate_run.h) and the pool of
// worker threads that trains them. A job trains one replica of one profile
// of one trial; the pool's workers pull jobs in order from a shared counter
// (Take), which rank 0 also uses to hand jobs to other MPI ranks, and hand
// each result back to the one thread that stores them (Next).
#ifndef XWIRES_API_REPLICATE_POOL_H_
#define XWIRES_API_REPLICATE_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "replicate_wire.h"
#include "xwires/api/trial_setup.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/trainers/replica.h"

namespace xw::replicate_pool {

// One replica to train (trial: index into the loaded setups).
using Job = replicate_wire::Job;

struct Done {
  Job job;
  Result<ReplicaRecord> result = Status::Internal("not run");
  double wall_s = 0;
  int rank = 0;  // the MPI rank that trained it
};

// Trains job `j` with `threads` threads; `stop` is polled inside training.
Done TrainJob(const std::vector<TrialSetup>& setups, const Job& j, PerturbFamily family,
              const std::string& family_name, bool keep_weights, int threads,
              std::function<bool()> stop);

// Worker threads pulling jobs in order; results come back in completion
// order to the calling thread, which alone touches the dataset. Under MPI,
// rank 0 hands jobs to the other ranks from the same counter (Take).
class Pool {
 public:
  Pool(const std::vector<TrialSetup>& setups, const std::vector<Job>& jobs, PerturbFamily family,
       const std::string& family_name, bool keep_weights, int workers, int threads_each,
       const std::function<bool()>& should_stop)
      : setups_(setups),
        jobs_(jobs),
        family_(family),
        family_name_(family_name),
        keep_weights_(keep_weights),
        should_stop_(should_stop),
        workers_(workers),
        threads_each_(threads_each) {}
  // Starts the worker threads (jobs taken before, with Take, are not theirs).
  void Start() {
    for (int w = 0; w < workers_; ++w) {
      threads_.emplace_back([this] { Work(threads_each_); });
    }
  }
  ~Pool() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  // The next finished job, or nullopt when none finished within `wait`.
  std::optional<Done> Next(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, wait, [&] { return !done_.empty(); });
    if (done_.empty()) return std::nullopt;
    Done d = std::move(done_.front());
    done_.pop_front();
    return d;
  }
  // The next job index nobody has taken (nullopt once all are taken).
  std::optional<size_t> Take() {
    const size_t k = next_.fetch_add(1);
    if (k >= jobs_.size()) return std::nullopt;
    return k;
  }
  void Stop() { stop_ = true; }
  bool stopped() const { return stop_; }

 private:
  void Work(int threads) {
    while (auto k = Take()) {
      Done d;
      if (stop_ || (should_stop_ && should_stop_())) {
        stop_ = true;
        d.job = jobs_[*k];
        d.result = Status::Cancelled("replication was stopped");
      } else {
        d = TrainJob(setups_, jobs_[*k], family_, family_name_, keep_weights_, threads,
                     [this] { return stop_.load(); });
      }
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(d));
      cv_.notify_all();
    }
  }

  const std::vector<TrialSetup>& setups_;
  const std::vector<Job>& jobs_;
  PerturbFamily family_;
  std::string family_name_;
  bool keep_weights_;
  std::function<bool()> should_stop_;
  int workers_, threads_each_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Done> done_;
  std::vector<std::thread> threads_;
};

}  // namespace xw::replicate_pool

#endif  // XWIRES_API_REPLICATE_POOL_H_
