// Worker threads that train the pairs of a search.
#include <time.h>

#include <exception>

#include "driver_run.h"

namespace xw::hpo::internal {
namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

std::vector<int> SplitThreads(int threads, int jobs) {
  threads = std::max(1, threads);
  jobs = std::max(1, jobs);
  std::vector<int> out(jobs, std::max(1, threads / jobs));
  if (threads > jobs) {
    for (int k = 0; k < threads % jobs; ++k) ++out[k];
  }
  return out;
}

WorkerPool::WorkerPool(const TrialContext& ctx, std::vector<int> slot_threads)
    : ctx_(ctx),
      slot_threads_(std::move(slot_threads)),
      jobs_(slot_threads_.size()),
      busy_(slot_threads_.size(), false) {
  for (size_t k = 0; k < slot_threads_.size(); ++k) {
    threads_.emplace_back([this, k] { Work(static_cast<int>(k)); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int WorkerPool::IdleSlot() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t k = 0; k < busy_.size(); ++k) {
    if (!busy_[k]) return static_cast<int>(k);
  }
  return -1;
}

void WorkerPool::Submit(int slot, Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_[slot] = std::move(job);
    busy_[slot] = true;
  }
  ++outstanding_;
  cv_.notify_all();
}

std::optional<JobResult> WorkerPool::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !results_.empty(); });
  if (results_.empty()) return std::nullopt;
  JobResult r = std::move(results_.front());
  results_.pop_front();
  --outstanding_;
  return r;
}

void WorkerPool::Work(int slot) {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return shutdown_ || jobs_[slot].has_value(); });
      // Shut down only when idle: a submitted trial always runs to the end.
      if (!jobs_[slot].has_value()) return;
      job = std::move(*jobs_[slot]);
      jobs_[slot].reset();
    }
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuSeconds();
    JobResult r;
    r.job = job;
    try {
      if (job.replica) {
        const ReplicaTask& t = *job.replica;
        TrainOptions o = TrialTrainOptions(ctx_.config, t.x, slot_threads_[slot]);
        o.should_stop = [this] { return cancel_.load(); };
        if (!ctx_.init.empty()) o.init_weights = &ctx_.init;
        r.replica = TrainReplica(ctx_.profiles[t.model], ctx_.data, o, t.replica, t.family);
      } else {
        r.record = RunTrial(ctx_, job.x, slot_threads_[slot],
                            [this] { return cancel_.load(); });
      }
    } catch (const std::exception& e) {
      r.record = Status::Internal(std::string("trial threw: ") + e.what());
    }
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    r.cpu_seconds = ThreadCpuSeconds() - cpu_start;
    {
      std::lock_guard<std::mutex> lock(mu_);
      results_.push_back(std::move(r));
      busy_[slot] = false;
    }
    cv_.notify_all();
  }
}

}  // namespace xw::hpo::internal
