// RunReplicate (replicate_run.h): checks, the work list, the worker threads
// and the store-as-you-go loop.
#include "xwires/api/replicate_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "xwires/api/trial_setup.h"
#include "xwires/core/parallel.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/trainers/replica.h"

namespace xw {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string TrialName(int64_t id) { return "trial " + std::to_string(id); }

// The selected trial ids, in order, from a read-only handle.
Result<std::vector<int64_t>> SelectTrials(const Dataset& ds, const ReplicateRequest& r) {
  const int modes = !r.trials.empty() + (r.top > 0) + !r.where.empty();
  if (modes != 1) {
    return Status::InvalidArgument(
        "name the trials one way: TRIALS, --top N or --where FILTER (got " +
        std::to_string(modes) + ")");
  }
  if (!r.trials.empty()) {
    std::set<int64_t> seen;
    for (int64_t id : r.trials) {
      if (!seen.insert(id).second) {
        return Status::InvalidArgument("TRIALS: trial " + std::to_string(id) +
                                       " is named twice");
      }
      auto t = ds.GetTrial(id);
      if (!t.ok()) {
        return Status::NotFound(TrialName(id) + " is not in " + ds.dir());
      }
    }
    return r.trials;
  }
  TrialQuery q;
  if (r.top > 0) {
    q.order_by = {"-diff"};
    q.limit = r.top;
    q.statuses = {"ok", "diverged"};
  } else {
    q.where = r.where;
  }
  auto rows = ds.Query(q);
  if (!rows.ok()) {
    return rows.status().WithContext(r.top > 0 ? "--top" : "--where");
  }
  std::vector<int64_t> ids;
  for (const TrialRow& t : *rows) ids.push_back(t.id);
  if (ids.empty()) {
    return Status::NotFound(std::string(r.top > 0 ? "--top" : "--where") +
                            ": no trial in " + ds.dir() + " matches");
  }
  return ids;
}

// One replica to train.
struct Job {
  size_t trial = 0;  // index into the loaded setups
  size_t model = 0;  // model index in the trial
  int64_t replica = 0;
};

struct Done {
  Job job;
  Result<ReplicaResult> result = Status::Internal("not run");
  double wall_s = 0;
};

// Worker threads pulling jobs in order; results come back in completion
// order to the calling thread, which alone touches the dataset.
class Pool {
 public:
  Pool(const std::vector<TrialSetup>& setups, const std::vector<Job>& jobs, PerturbFamily family,
       int workers, int threads_each, const std::function<bool()>& should_stop)
      : setups_(setups), jobs_(jobs), family_(family), should_stop_(should_stop) {
    for (int w = 0; w < workers; ++w) {
      threads_.emplace_back([this, threads_each] { Work(threads_each); });
    }
  }
  ~Pool() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  // The next finished job; nullopt when every job is handed back.
  std::optional<Done> Next() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !done_.empty() || returned_ == jobs_.size(); });
    if (done_.empty()) return std::nullopt;
    Done d = std::move(done_.front());
    done_.pop_front();
    return d;
  }
  void Stop() { stop_ = true; }

 private:
  void Work(int threads) {
    for (;;) {
      const size_t k = next_.fetch_add(1);
      if (k >= jobs_.size()) return;
      Done d;
      d.job = jobs_[k];
      if (stop_ || (should_stop_ && should_stop_())) {
        stop_ = true;
        d.result = Status::Cancelled("replication was stopped");
      } else {
        const TrialSetup& s = setups_[d.job.trial];
        TrainOptions o = s.options;
        o.threads = threads;
        if (!s.init_weights.empty()) o.init_weights = &s.init_weights;
        o.should_stop = [this] { return stop_.load(); };
        const auto start = Clock::now();
        d.result = TrainReplica(s.profiles[d.job.model], s.data, o, d.job.replica, family_);
        d.wall_s = Since(start);
      }
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(d));
      ++returned_;
      cv_.notify_all();
    }
  }

  const std::vector<TrialSetup>& setups_;
  const std::vector<Job>& jobs_;
  PerturbFamily family_;
  std::function<bool()> should_stop_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Done> done_;
  size_t returned_ = 0;
  std::vector<std::thread> threads_;
};

ReplicaRecord ToRecord(const TrialSetup& s, size_t model, const std::string& family,
                       ReplicaResult& r, bool keep_weights) {
  ReplicaRecord rec;
  rec.trial_id = s.trial.id;
  rec.profile = s.trial.models[model].profile;
  rec.family = family;
  rec.replica = r.perturbation.replica;
  rec.params_json = r.perturbation.ParamsJson();
  ModelRecord& m = r.train.record;
  rec.status = m.status == "ok" ? "ok" : "diverged";
  rec.test_acc = m.test_acc;
  rec.test_loss = m.test_loss;
  rec.first_nonfinite_step = r.train.diverged_step;
  rec.curves = m.curves;
  rec.predictions = std::move(r.train.test_predictions);
  rec.weights_sha256 = m.weights_sha256;
  if (keep_weights) rec.weights = std::move(m.weights);
  rec.wall_time_s = m.wall_time_s;
  rec.fingerprint_json = m.fingerprint_json;
  return rec;
}

std::vector<uint8_t> Labels(const TrialSetup& s) {
  std::vector<uint8_t> out;
  for (int32_t l : s.data.test.labels) out.push_back(static_cast<uint8_t>(l));
  return out;
}

// Computes and stores every pair's statistics of trial `s` when all its
// replicas are stored; appends them to *out.
Status StatsIfComplete(Dataset& ds, const TrialSetup& s, const std::string& family, int k,
                       std::vector<ReplicaStatsRecord>* out) {
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> stored,
                      LoadReplicas(ds, s.trial.id, family, /*with_data=*/true));
  std::map<std::string, std::vector<ReplicaRecord>> by_profile;
  for (ReplicaRecord& r : stored) {
    if (r.replica < k) by_profile[r.profile].push_back(std::move(r));
  }
  for (const ModelRow& m : s.trial.models) {
    if (static_cast<int>(by_profile[m.profile].size()) != k) return Status::OK();
  }
  const std::vector<uint8_t> labels = Labels(s);
  for (size_t i = 0; i < s.trial.models.size(); ++i) {
    for (size_t j = i + 1; j < s.trial.models.size(); ++j) {
      ReplicaStatsRecord rec;
      rec.trial_id = s.trial.id;
      rec.profile_a = s.trial.models[i].profile;
      rec.profile_b = s.trial.models[j].profile;
      rec.family = family;
      rec.k_a = rec.k_b = k;
      rec.num_classes = s.data.test.num_classes;
      rec.test_labels = labels;
      XW_ASSIGN_OR_RETURN(rec.stats,
                          ReplicaPairStatistics(by_profile[rec.profile_a],
                                                by_profile[rec.profile_b], labels,
                                                rec.num_classes));
      XW_RETURN_IF_ERROR(StoreReplicaStats(ds, rec));
      out->push_back(std::move(rec));
    }
  }
  return Status::OK();
}

}  // namespace

Result<ReplicateSummary> RunReplicate(const ReplicateRequest& r) {
  const auto start = Clock::now();
  // Checks first, on a read-only handle: nothing is written before all pass.
  if (r.replicas < kMinReplicas) {
    return Status::InvalidArgument(
        "--replicas: " + std::to_string(r.replicas) + " is too few; at least " +
        std::to_string(kMinReplicas) +
        " are needed, because below 4 replicas a side an exact permutation test "
        "cannot reach p < 0.05 (with 3 + 3 the smallest p is 2/20 = 0.1)");
  }
  if (r.replicas > 32) {
    return Status::InvalidArgument("--replicas: at most 32 (the exact test enumerates splits)");
  }
  auto family = ParsePerturbFamily(r.perturb);
  if (!family.ok()) return family.status().WithContext("--perturb");
  if (r.jobs < 1) return Status::InvalidArgument("--jobs must be >= 1");
  if (r.threads < 0) return Status::InvalidArgument("--threads must be >= 0 (0: every core)");
  std::vector<TrialSetup> setups;
  {
    XW_ASSIGN_OR_RETURN(auto ro, Dataset::Open(r.dataset, OpenMode::kReadOnly));
    XW_ASSIGN_OR_RETURN(std::vector<int64_t> ids, SelectTrials(*ro, r));
    for (int64_t id : ids) {
      auto s = LoadTrialSetup(*ro, id, /*train_data=*/true);
      if (!s.ok()) return s.status();
      for (const Profile& p : s->profiles) {
        Status ok = CheckPerturbation(p, *family);
        if (!ok.ok()) return ok.WithContext(TrialName(id));
      }
      if (s->data.test.num_classes > 256) {
        return Status::InvalidArgument(TrialName(id) +
                                       ": replicas store predictions as uint8 (<= 256 classes)");
      }
      setups.push_back(std::move(s).value());
    }
  }
  XW_ASSIGN_OR_RETURN(auto ds, Dataset::Open(r.dataset, OpenMode::kReadWrite));
  ReplicateSummary summary;
  // The work list: every (trial, model, r) not stored yet.
  std::vector<Job> jobs;
  for (size_t t = 0; t < setups.size(); ++t) {
    summary.trial_ids.push_back(setups[t].trial.id);
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> stored,
                        LoadReplicas(*ds, setups[t].trial.id, r.perturb));
    std::set<std::pair<std::string, int64_t>> have;
    for (const ReplicaRecord& x : stored) have.insert({x.profile, x.replica});
    for (size_t m = 0; m < setups[t].trial.models.size(); ++m) {
      for (int64_t k = 0; k < r.replicas; ++k) {
        if (have.count({setups[t].trial.models[m].profile, k})) {
          ++summary.skipped;
        } else {
          jobs.push_back({t, m, k});
        }
      }
    }
  }
  const int threads = r.threads == 0 ? HardwareThreads() : r.threads;
  const int workers = std::max(1, std::min<int>(r.jobs, static_cast<int>(jobs.size())));
  ReplicateRequest::Progress progress;
  progress.total = static_cast<int64_t>(jobs.size());
  progress.skipped = summary.skipped;
  std::vector<int> left(setups.size(), 0);
  for (const Job& j : jobs) ++left[j.trial];
  Status failed;
  {
    Pool pool(setups, jobs, *family, workers, std::max(1, threads / workers), r.should_stop);
    while (auto done = pool.Next()) {
      if (!failed.ok()) continue;  // drain the pool after a failure
      const TrialSetup& s = setups[done->job.trial];
      if (!done->result.ok()) {
        failed = done->result.status().WithContext(TrialName(s.trial.id));
        pool.Stop();
        continue;
      }
      ReplicaRecord rec =
          ToRecord(s, done->job.model, r.perturb, *done->result, r.store_weights);
      auto id = StoreReplica(*ds, rec);
      if (!id.ok()) {
        failed = id.status();
        pool.Stop();
        continue;
      }
      ++summary.trained;
      progress.done = summary.trained;
      progress.trial_id = s.trial.id;
      progress.profile = rec.profile;
      progress.replica = rec.replica;
      progress.elapsed_s = Since(start);
      progress.eta_s = progress.elapsed_s / progress.done * (progress.total - progress.done);
      if (r.on_progress) r.on_progress(progress);
      if (--left[done->job.trial] == 0) {
        Status st = StatsIfComplete(*ds, s, r.perturb, r.replicas, &summary.stats);
        if (!st.ok()) {
          failed = st;
          pool.Stop();
        }
      }
    }
  }
  if (!failed.ok()) return failed;
  // Trials that were complete before this run (a resumed run): their
  // statistics are recomputed too, so the summary covers every trial.
  for (size_t t = 0; t < setups.size(); ++t) {
    if (left[t] == 0 && std::none_of(jobs.begin(), jobs.end(),
                                     [t](const Job& j) { return j.trial == t; })) {
      XW_RETURN_IF_ERROR(StatsIfComplete(*ds, setups[t], r.perturb, r.replicas, &summary.stats));
    }
  }
  summary.wall_s = Since(start);
  return summary;
}

}  // namespace xw
