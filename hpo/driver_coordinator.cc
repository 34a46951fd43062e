// Rank 0's Coordinator (dataset writes, global budget, progress) and the
// RemoteSink other ranks use to reach it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "driver_run.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw::hpo::internal {
namespace {

void PutJob(ByteWriter& w, const Job& j) {
  w.I64(j.pending_id);
  w.I64(j.subspace);
  w.U64(j.x.size());
  for (double v : j.x) w.F64(v);
}

bool GetJob(ByteReader& r, Job* j) {
  j->pending_id = r.I64();
  j->subspace = static_cast<int>(r.I64());
  const uint64_t n = r.U64();
  if (!r.ok() || n > 64) return false;
  j->x.resize(n);
  for (double& v : j->x) v = r.F64();
  return r.ok();
}

Status Malformed(int source, const char* what) {
  return Status::Corruption("malformed " + std::string(what) +
                            " message from rank " + std::to_string(source));
}

}  // namespace

void StartMessage(const SearchStore& store, const Budget& b,
                  const DriverOptions& o, int ranks, int jobs,
                  const std::vector<int>& split) {
  if (!o.on_message) return;
  int64_t done = 0, failed = 0, pending = 0;
  for (const HistoryEntry& e : store.history()) {
    (e.status == "done" ? done : e.status == "failed" ? failed : pending)++;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "search %lld in %s: %d subspace%s x %d trials (%lld "
                "planned%s), %d rank%s, "
                "%d job%s per rank (%d thread%s each)",
                static_cast<long long>(store.search_id()),
                o.dataset_dir.c_str(), b.subspaces, b.subspaces == 1 ? "" : "s",
                b.trials_per_subspace, static_cast<long long>(b.Planned()),
                b.max_seconds > 0
                    ? (", at most " +
                       std::to_string(static_cast<int64_t>(b.max_seconds)) +
                       " s of new trials")
                          .c_str()
                    : "",
                ranks, ranks == 1 ? "" : "s", jobs, jobs == 1 ? "" : "s",
                split[0], split[0] == 1 ? "" : "s");
  o.on_message(buf);
  if (o.resume_id) {
    std::snprintf(
        buf, sizeof buf,
        "resuming: %lld finished, %lld failed, %lld interrupted (re-run)",
        static_cast<long long>(done), static_cast<long long>(failed),
        static_cast<long long>(pending));
    o.on_message(buf);
  }
}

int64_t Budget::Planned() const {
  int64_t planned = static_cast<int64_t>(subspaces) * trials_per_subspace;
  if (max_trials > 0) planned = std::min(planned, max_trials);
  return planned;
}

Coordinator::Coordinator(SearchStore& store, Cluster& cluster,
                         const Budget& budget, const DriverOptions& options)
    : store_(store), cluster_(cluster), budget_(budget), options_(options) {
  for (const HistoryEntry& e : store.history()) {
    ++started_;
    if (e.status == "done") {
      ++finished_;
      if (e.objective > best_ && !(options.best_excludes_degenerate && e.degenerate)) {
        best_ = e.objective;
        best_trial_ = e.id;
      }
    } else if (e.status == "failed") {
      ++failed_;
    } else {
      ++running_;  // re-trained by the scheduler of its rank
    }
  }
}

double Coordinator::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

Result<int64_t> Coordinator::Begin(int subspace, const std::vector<double>& x,
                                   int threads,
                                   const std::string& optimizer_state) {
  // A trial is not started if it would be expected (by the mean duration of
  // this run's trials so far) to end after max_seconds, so a run overshoots
  // its time budget by a fraction of a trial rather than by a whole one.
  const double expected =
      ended_this_run_ > 0
          ? trial_seconds_ / static_cast<double>(ended_this_run_)
          : 0.0;
  if ((budget_.max_trials > 0 && started_ >= budget_.max_trials) ||
      (budget_.max_seconds > 0 &&
       Elapsed() + expected >= budget_.max_seconds)) {
    budget_cut_ = true;
    return int64_t{-1};
  }
  XW_ASSIGN_OR_RETURN(int64_t id,
                      store_.AddPending(subspace, x, threads, optimizer_state));
  if (plan_ != nullptr) plan_->OnBegin(id);
  ++started_;
  ++running_;
  return id;
}

Status Coordinator::Finish(const Job& job, TrialRecord r, double seconds) {
  const double objective = r.divergence;
  const bool degenerate = IsDegenerate(DegenerateFlags(r));
  std::string text = PointText(store_.config().search.space, job.x);
  char buf[160];
  std::snprintf(buf, sizeof buf, " -> %.4f", objective);
  text += buf;
  for (const ModelRecord& m : r.models) {
    std::snprintf(buf, sizeof buf, "%s%s %.4f%s",
                  m.profile == r.models[0].profile ? " (" : ", ",
                  m.profile.c_str(), m.test_acc,
                  m.status == "ok" ? "" : (" " + m.status).c_str());
    text += buf;
  }
  std::snprintf(buf, sizeof buf, "; %.1f s)", seconds);
  text += buf;
  if (degenerate) text += " degenerate";
  XW_ASSIGN_OR_RETURN(int64_t id, store_.AddDone(job.pending_id, job.subspace,
                                                 job.x, std::move(r)));
  if (plan_ != nullptr) plan_->OnFinish(job.pending_id, id, job.subspace, job.x, objective);
  plan_dirty_ = true;
  ++finished_;
  --running_;
  ++ended_this_run_;
  trial_seconds_ += seconds;
  if (objective > best_ && !(options_.best_excludes_degenerate && degenerate)) {
    best_ = objective;
    best_trial_ = id;
  }
  Report(job, id, false, text);
  return Status::OK();
}

Status Coordinator::Fail(const Job& job, const std::string& message,
                         double seconds) {
  XW_RETURN_IF_ERROR(
      store_.AddFailed(job.pending_id, job.subspace, job.x, message));
  if (plan_ != nullptr) plan_->OnFail(job.pending_id);
  plan_dirty_ = true;
  ++failed_;
  --running_;
  ++ended_this_run_;
  trial_seconds_ += seconds;
  Report(job, job.pending_id, true,
         PointText(store_.config().search.space, job.x) +
             " -> failed: " + message);
  return Status::OK();
}

void Coordinator::Tick() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_tick_ < std::chrono::seconds(1)) return;
  last_tick_ = now;
  Report(Job{}, 0, false, "");
}

void Coordinator::Report(const Job& job, int64_t trial_id, bool failed,
                         const std::string& text) {
  if (!options_.on_progress) return;
  SearchProgress p;
  p.search_id = store_.search_id();
  p.finished = finished_;
  p.failed = failed_;
  p.running = running_;
  p.planned = budget_.Planned();
  p.best = best_;
  p.best_trial = best_trial_;
  p.elapsed_s = Elapsed();
  const int64_t remaining =
      std::max<int64_t>(0, p.planned - finished_ - failed_);
  if (ended_this_run_ > 0 && p.elapsed_s > 0) {
    p.eta_s = remaining / (ended_this_run_ / p.elapsed_s);
    if (budget_.max_seconds > 0) {
      const double cap = std::max(0.0, budget_.max_seconds - p.elapsed_s) +
                         trial_seconds_ / static_cast<double>(ended_this_run_);
      p.eta_s = std::min(p.eta_s, remaining == 0 ? 0.0 : cap);
    }
  }
  p.trial_id = trial_id;
  p.subspace = job.subspace;
  p.trial_failed = failed;
  p.trial_text = text;
  options_.on_progress(p);
}

Status Coordinator::Serve() {
  int source = 0, tag = 0;
  std::string bytes;
  while (cluster_.TryRecv(&source, &tag, &bytes)) {
    ByteReader r(bytes);
    Job job;
    if (tag == kTagBegin) {
      if (!GetJob(r, &job)) return Malformed(source, "begin");
      const int threads = static_cast<int>(r.I64());
      const std::string state = r.Str();
      if (!r.ok()) return Malformed(source, "begin");
      XW_ASSIGN_OR_RETURN(int64_t id,
                          Begin(job.subspace, job.x, threads, state));
      ByteWriter w;
      w.I64(id);
      cluster_.Send(source, kTagBeginReply, w.bytes());
    } else if (tag == kTagFinish) {
      if (!GetJob(r, &job)) return Malformed(source, "finish");
      const double seconds = r.F64();
      const std::string record = r.Str();
      if (!r.ok()) return Malformed(source, "finish");
      XW_ASSIGN_OR_RETURN(TrialRecord rec, DecodeTrialRecord(record));
      XW_RETURN_IF_ERROR(Finish(job, std::move(rec), seconds));
    } else if (tag == kTagFail) {
      if (!GetJob(r, &job)) return Malformed(source, "fail");
      const double seconds = r.F64();
      const std::string message = r.Str();
      if (!r.ok()) return Malformed(source, "fail");
      XW_RETURN_IF_ERROR(Fail(job, message, seconds));
    } else if (tag == kTagRankDone) {
      ++ranks_done_;
    } else if (tag >= kTagScreenDone && tag <= kTagRetell) {
      XW_RETURN_IF_ERROR(ServeReplicas(source, tag, bytes));
    } else {
      return Status::Internal("unexpected message tag " + std::to_string(tag) +
                              " from rank " + std::to_string(source));
    }
  }
  return Status::OK();
}

Result<int64_t> RemoteSink::Begin(int subspace, const std::vector<double>& x,
                                  int threads,
                                  const std::string& optimizer_state) {
  ByteWriter w;
  PutJob(w, Job{0, subspace, x, std::nullopt});
  w.I64(threads);
  w.Str(optimizer_state);
  cluster_.Send(0, kTagBegin, w.bytes());
  const std::string reply = cluster_.Recv(0, kTagBeginReply);
  ByteReader r(reply);
  const int64_t id = r.I64();
  if (!r.ok()) return Status::Corruption("malformed reply from rank 0");
  return id;
}

Status RemoteSink::Finish(const Job& job, TrialRecord rec, double seconds) {
  ByteWriter w;
  PutJob(w, job);
  w.F64(seconds);
  w.Str(EncodeTrialRecord(rec));
  cluster_.Send(0, kTagFinish, w.bytes());
  return Status::OK();
}

Status RemoteSink::Fail(const Job& job, const std::string& message,
                        double seconds) {
  ByteWriter w;
  PutJob(w, job);
  w.F64(seconds);
  w.Str(message);
  cluster_.Send(0, kTagFail, w.bytes());
  return Status::OK();
}

void RemoteSink::Done() { cluster_.Send(0, kTagRankDone, ""); }

}  // namespace xw::hpo::internal
