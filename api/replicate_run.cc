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

#include "replicate_pool.h"
#include "replicate_wire.h"
#include "xwires/api/trial_setup.h"
#include "xwires/hpo/search_driver.h"
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

using replicate_pool::Done;
using replicate_pool::Job;
using replicate_pool::Pool;
using replicate_pool::TrainJob;

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

// What rank 0 (or a run without MPI) has checked and planned.
struct Prepared {
  PerturbFamily family = PerturbFamily::kSeed;
  std::vector<TrialSetup> setups;
  std::unique_ptr<Dataset> ds;
  std::vector<Job> jobs;
  ReplicateSummary summary;
};

// Every check, then the work list: every (trial, model, r) not stored yet.
Result<Prepared> Prepare(const ReplicateRequest& r) {
  Prepared out;
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
  out.family = *family;
  if (r.jobs < 1) return Status::InvalidArgument("--jobs must be >= 1");
  if (r.threads < 0) return Status::InvalidArgument("--threads must be >= 0 (0: every core)");
  std::vector<TrialSetup>& setups = out.setups;
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
  XW_ASSIGN_OR_RETURN(out.ds, Dataset::Open(r.dataset, OpenMode::kReadWrite));
  ReplicateSummary& summary = out.summary;
  std::vector<Job>& jobs = out.jobs;
  // The work list: every (trial, model, r) not stored yet.
  for (size_t t = 0; t < setups.size(); ++t) {
    summary.trial_ids.push_back(setups[t].trial.id);
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> stored,
                        LoadReplicas(*out.ds, setups[t].trial.id, r.perturb));
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
  return out;
}

// Ranks > 0: the plan's trials loaded read-only, and the jobs rank 0 hands
// out trained one at a time and sent back.
Result<ReplicateSummary> RunWorkerRank(const ReplicateRequest& r, hpo::Cluster& c) {
  std::string bytes;
  c.Broadcast(&bytes);
  XW_ASSIGN_OR_RETURN(replicate_wire::Plan plan, replicate_wire::DecodePlan(bytes));
  if (!plan.error.empty()) {
    return Status(static_cast<Status::Code>(plan.error_code), plan.error);
  }
  XW_ASSIGN_OR_RETURN(PerturbFamily family, ParsePerturbFamily(r.perturb));
  std::vector<TrialSetup> setups;
  {
    auto ro = Dataset::Open(r.dataset, OpenMode::kReadOnly);
    for (int64_t id : plan.trial_ids) {
      auto s = ro.ok() ? LoadTrialSetup(**ro, id, /*train_data=*/true)
                       : Result<TrialSetup>(ro.status());
      if (!s.ok()) {
        // Rank 0 would wait for this rank's requests for ever.
        std::fprintf(stderr, "xwires: error: rank %d: %s\n", c.rank(),
                     s.status().ToString().c_str());
        c.Abort(1);
      }
      setups.push_back(std::move(s).value());
    }
  }
  const int threads =
      std::max(1, (r.threads == 0 ? HardwareThreads() : r.threads) / c.local_size());
  ReplicateSummary summary;
  summary.trial_ids = plan.trial_ids;
  for (;;) {
    c.Send(0, replicate_wire::kWantTag, "");
    const int64_t k = std::stoll(c.Recv(0, replicate_wire::kJobTag));
    if (k < 0 || k >= static_cast<int64_t>(plan.jobs.size())) break;
    Done d = TrainJob(setups, plan.jobs[static_cast<size_t>(k)], family, r.perturb,
                      r.store_weights, threads, nullptr);
    replicate_wire::JobResult jr;
    jr.job = k;
    jr.wall_s = d.wall_s;
    if (d.result.ok()) {
      jr.record = std::move(d.result).value();
      ++summary.trained;
    } else {
      jr.status = d.result.status();
    }
    c.Send(0, replicate_wire::kResultTag, replicate_wire::EncodeResult(jr));
  }
  return summary;
}

}  // namespace

Result<ReplicateSummary> RunReplicate(const ReplicateRequest& r) {
  const auto start = Clock::now();
  hpo::Cluster* c = r.cluster != nullptr && r.cluster->size() > 1 ? r.cluster : nullptr;
  if (c != nullptr && c->rank() != 0) return RunWorkerRank(r, *c);
  Result<Prepared> prepared = Prepare(r);
  if (c != nullptr) {
    replicate_wire::Plan plan;
    if (!prepared.ok()) {
      plan.error = prepared.status().message();
      plan.error_code = static_cast<int>(prepared.status().code());
    } else {
      plan.trial_ids = prepared->summary.trial_ids;
      plan.jobs = prepared->jobs;
    }
    std::string bytes = replicate_wire::EncodePlan(plan);
    c->Broadcast(&bytes);
  }
  if (!prepared.ok()) return prepared.status();
  const PerturbFamily family = prepared->family;
  const std::vector<TrialSetup>& setups = prepared->setups;
  Dataset* ds = prepared->ds.get();
  const std::vector<Job>& jobs = prepared->jobs;
  ReplicateSummary& summary = prepared->summary;
  // Ranks on one node share its cores.
  const int threads = std::max(1, (r.threads == 0 ? HardwareThreads() : r.threads) /
                                      (c != nullptr ? c->local_size() : 1));
  const int workers = std::max(1, std::min<int>(r.jobs, static_cast<int>(jobs.size())));
  ReplicateRequest::Progress progress;
  progress.total = static_cast<int64_t>(jobs.size());
  progress.skipped = summary.skipped;
  std::vector<int> left(setups.size(), 0);
  for (const Job& j : jobs) ++left[j.trial];
  Status failed;
  {
    Pool pool(setups, jobs, family, r.perturb, r.store_weights, workers,
              std::max(1, threads / workers), r.should_stop);
    // Stores one finished job (rank 0 is the only writer).
    auto store = [&](Done& done) {
      if (!failed.ok()) return;  // drain the pool after a failure
      const TrialSetup& s = setups[done.job.trial];
      if (!done.result.ok()) {
        failed = done.result.status().WithContext(TrialName(s.trial.id));
        pool.Stop();
        return;
      }
      const ReplicaRecord& rec = *done.result;
      auto id = StoreReplica(*ds, rec);
      if (!id.ok()) {
        failed = id.status();
        pool.Stop();
        return;
      }
      ++summary.trained;
      progress.done = summary.trained;
      progress.trial_id = s.trial.id;
      progress.profile = rec.profile;
      progress.replica = rec.replica;
      progress.rank = done.rank;
      progress.elapsed_s = Since(start);
      progress.eta_s = progress.elapsed_s / progress.done * (progress.total - progress.done);
      if (r.on_progress) r.on_progress(progress);
      if (--left[done.job.trial] == 0) {
        Status st = StatsIfComplete(*ds, s, r.perturb, r.replicas, &summary.stats);
        if (!st.ok()) {
          failed = st;
          pool.Stop();
        }
      }
    };
    // Every job is taken once, by a local worker or another rank, and comes
    // back once; the other ranks are told to stop when none is left.
    size_t handled = 0;
    int remote = c != nullptr ? c->size() - 1 : 0;
    std::set<int> asked;  // ranks whose first request was answered
    auto on_message = [&](int source, int tag, const std::string& bytes) {
      if (tag == replicate_wire::kWantTag) {
        std::optional<size_t> k;
        if (failed.ok() && !pool.stopped()) k = pool.Take();
        c->Send(source, replicate_wire::kJobTag, std::to_string(k ? int64_t(*k) : -1));
        if (!k) --remote;
        asked.insert(source);
        return;
      }
      if (tag != replicate_wire::kResultTag) return;
      ++handled;
      auto jr = replicate_wire::DecodeResult(bytes);
      if (jr.ok() && (jr->job < 0 || jr->job >= static_cast<int64_t>(jobs.size()))) {
        jr = Status::Corruption("rank " + std::to_string(source) + " returned job " +
                                std::to_string(jr->job) + " of " + std::to_string(jobs.size()));
      }
      if (!jr.ok()) {
        if (failed.ok()) failed = jr.status();
        pool.Stop();
        return;
      }
      Done d;
      d.job = jobs[static_cast<size_t>(jr->job)];
      d.wall_s = jr->wall_s;
      d.rank = source;
      d.result = jr->status.ok() ? Result<ReplicaRecord>(std::move(jr->record))
                                 : Result<ReplicaRecord>(jr->status);
      store(d);
    };
    int source = 0, tag = 0;
    std::string bytes;
    // Every other rank's first request is answered before the local workers
    // start, so that each rank gets work while there is some (the ranks load
    // their trials after rank 0 did).
    for (const int others = remote; static_cast<int>(asked.size()) < others;) {
      if (c->TryRecv(&source, &tag, &bytes)) {
        on_message(source, tag, bytes);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    pool.Start();
    while (handled < jobs.size() || remote > 0) {
      if (auto done = pool.Next(std::chrono::milliseconds(c != nullptr ? 5 : 200))) {
        ++handled;
        store(*done);
      }
      while (c != nullptr && c->TryRecv(&source, &tag, &bytes)) on_message(source, tag, bytes);
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
