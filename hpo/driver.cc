// The search driver: start-up (config, dataset, history broadcast), the
// per-rank scheduler, and the end of a search.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "driver_run.h"
#include "xwires/core/parallel.h"

namespace xw::hpo {
namespace internal {
namespace {

// One subspace's optimiser and the points it must not suggest again.
struct SubspaceState {
  int index = 0;
  std::optional<GpOptimizer> opt;
  int count = 0;  // rows of this subspace: done, failed, pending, running
  std::vector<std::vector<double>> running, failed;
  bool exhausted = false;  // Ask found no room
  // Finished trials in the order they finished (what the GP was told).
  std::vector<ToldTrial> told;
};

void Erase(std::vector<std::vector<double>>& v, const std::vector<double>& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}

// The subspace to draw the next point from: the fewest rows first, so a
// budget cut leaves the subspaces evenly explored; lowest index on ties.
SubspaceState* Pick(std::map<int, SubspaceState>& subs, int per_subspace) {
  SubspaceState* best = nullptr;
  for (auto& [s, st] : subs) {
    if (st.exhausted || st.count >= per_subspace) continue;
    if (best == nullptr || st.count < best->count) best = &st;
  }
  return best;
}

// Re-tells trial `trial_id` with its new observation (RebuildOptimizer),
// keeping the gp_hedge portfolio.
Status Retell(const SearchConfig& sc, std::map<int, SubspaceState>& subs, int64_t trial_id,
              const ObservationOf& obs) {
  for (auto& [s, st] : subs) {
    const bool mine = std::any_of(st.told.begin(), st.told.end(), [&](const auto& t) {
      return t.trial_id == trial_id;
    });
    if (!mine) continue;
    XW_ASSIGN_OR_RETURN(GpOptimizer opt, RebuildOptimizer(sc, s, st.told, obs));
    XW_RETURN_IF_ERROR(opt.set_hedge_state(st.opt->hedge_state()));
    st.opt.emplace(std::move(opt));
  }
  return Status::OK();
}

Status HandleResult(JobResult r, std::map<int, SubspaceState>& subs,
                    TrialSink& sink, TwoStage* plan, const ObservationOf& obs) {
  if (r.job.replica) {
    const ReplicaTask& t = *r.job.replica;
    if (!r.replica.ok() && r.replica.status().code() == Status::Code::kCancelled) {
      plan->Dropped(t);
      return Status::OK();
    }
    if (!r.replica.ok()) {
      return r.replica.status().WithContext("trial " + std::to_string(t.trial_id) +
                                            " replica " + std::to_string(t.replica));
    }
    std::string note;
    XW_RETURN_IF_ERROR(plan->Store(t, std::move(r.replica).value(), &note));
    char buf[32];
    std::snprintf(buf, sizeof buf, "; %.1f s", r.seconds);
    sink.Note(note + buf);
    return Status::OK();
  }
  SubspaceState& st = subs.at(r.job.subspace);
  Erase(st.running, r.job.x);
  // A trial stopped by an interruption keeps its pending row: a resumed
  // search re-trains it, as after a crash.
  if (!r.record.ok() && r.record.status().code() == Status::Code::kCancelled)
    return Status::OK();
  if (!r.record.ok()) {
    st.failed.push_back(r.job.x);
    return sink.Fail(r.job, r.record.status().ToString(), r.seconds);
  }
  const double objective = r.record->divergence;
  XW_RETURN_IF_ERROR(
      sink.Finish(r.job, std::move(r.record).value(), r.seconds));
  st.told.push_back(
      {plan != nullptr ? plan->TrialOf(r.job.pending_id) : 0, r.job.x, objective});
  TellTrial(*st.opt, st.told.back(), obs);
  return Status::OK();
}

}  // namespace

Status RunRank(const TrialContext& ctx,
               const std::vector<HistoryEntry>& history, const Budget& budget,
               int rank, int ranks, int jobs, int threads, TrialSink& sink,
               TwoStage* plan, bool screen) {
  const SearchConfig& sc = ctx.config.search;
  ObservationOf obs;
  if (plan != nullptr) obs = [plan](int64_t t) { return plan->Observation(t); };
  std::map<int, SubspaceState> subs;
  for (int s = rank; screen && s < budget.subspaces; s += ranks) {
    XW_ASSIGN_OR_RETURN(SearchSpace space, SearchSubspace(sc, s));
    XW_ASSIGN_OR_RETURN(GpOptimizer opt,
                        GpOptimizer::Create(space, SubspaceOptions(sc, s)));
    subs[s].index = s;
    subs[s].opt.emplace(std::move(opt));
  }
  // Rebuild the optimisers: finished trials in the order they finished
  // (SearchStore::history()), then each one's state as its latest proposal
  // left it (proposals are ordered by their pending rows' ids, which a
  // finished row keeps).
  std::deque<Job> resume;
  std::map<int, std::pair<int64_t, const std::string*>> latest;
  for (const HistoryEntry& e : history) {
    auto it = subs.find(e.subspace);
    if (it == subs.end()) continue;
    SubspaceState& st = it->second;
    ++st.count;
    const int64_t asked = e.pending_ref > 0 ? e.pending_ref : e.id;
    auto& l = latest[e.subspace];
    if (!e.optimizer_state.empty() && asked > l.first)
      l = {asked, &e.optimizer_state};
    if (e.status == "done") {
      st.told.push_back({plan != nullptr ? e.id : 0, e.x, e.objective});
      TellTrial(*st.opt, st.told.back(), obs);
    } else if (e.status == "failed") {
      st.failed.push_back(e.x);
    } else {
      resume.push_back(Job{e.id, e.subspace, e.x, std::nullopt});
    }
  }
  for (const auto& [s, l] : latest) {
    if (l.second == nullptr) continue;
    XW_RETURN_IF_ERROR(RestoreOptimizerState(*subs.at(s).opt, *l.second)
                           .WithContext("subspace " + std::to_string(s)));
  }
  ThreadScope scope(threads);  // the optimisers' own ParallelFor work
  WorkerPool pool(ctx, SplitThreads(threads, jobs));
  bool stop = false, interrupted = false, replan = plan != nullptr;
  int screens_running = 0;
  int idle_replans = 0;  // plans in a row while nothing ran
  std::deque<ReplicaTask> replicas;
  for (;;) {
    if (!interrupted && sink.StopRequested()) {
      interrupted = true;
      pool.Cancel();
    }
    if (replan && !interrupted) {
      // Screening has ended when no proposal can start or is under way.
      const bool ended = resume.empty() && screens_running == 0 &&
                         (stop || Pick(subs, budget.trials_per_subspace) == nullptr);
      std::vector<ReplicaTask> tasks;
      std::vector<int64_t> retold;
      XW_RETURN_IF_ERROR(plan->Plan(ended, &tasks, &retold));
      for (ReplicaTask& t : tasks) replicas.push_back(std::move(t));
      for (int64_t t : retold) XW_RETURN_IF_ERROR(Retell(sc, subs, t, obs));
      replan = false;
    }
    int slot;
    while (!interrupted && (slot = pool.IdleSlot()) >= 0) {
      if (!replicas.empty()) {  // replicas first: their LCBs steer the GPs
        Job job{0, 0, {}, std::move(replicas.front())};
        replicas.pop_front();
        pool.Submit(slot, std::move(job));
        continue;
      }
      if (!resume.empty()) {
        Job job = std::move(resume.front());
        resume.pop_front();
        subs.at(job.subspace).running.push_back(job.x);
        ++screens_running;
        pool.Submit(slot, std::move(job));
        continue;
      }
      SubspaceState* st =
          stop ? nullptr : Pick(subs, budget.trials_per_subspace);
      if (st == nullptr) break;
      std::vector<std::vector<double>> avoid = st->running;
      avoid.insert(avoid.end(), st->failed.begin(), st->failed.end());
      auto xs = st->opt->Ask(1, avoid);
      if (!xs.ok()) {
        st->exhausted = true;  // e.g. a tiny integer space fully explored
        continue;
      }
      XW_ASSIGN_OR_RETURN(
          int64_t id, sink.Begin(st->index, (*xs)[0], pool.threads(slot),
                                 OptimizerStateJson(*st->opt)));
      if (id < 0) {
        stop = true;
        replan = plan != nullptr;  // screening may have ended
        break;
      }
      ++st->count;
      ++screens_running;
      st->running.push_back((*xs)[0]);
      pool.Submit(slot, Job{id, st->index, (*xs)[0], std::nullopt});
    }
    XW_RETURN_IF_ERROR(sink.Serve());
    sink.Tick();
    if (pool.running() == 0) {
      if (plan != nullptr && !interrupted && !plan->finished()) {
        if (!replicas.empty()) continue;
        // Nothing runs: plan once more with what is stored.
        if (++idle_replans > 2) {
          return Status::Internal("the two-stage schedule has work left but planned none");
        }
        replan = true;
        continue;
      }
      if (sink.OthersDone()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const auto wait = sink.needs_polling() ? std::chrono::milliseconds(20)
                      : sink.stoppable()   ? std::chrono::milliseconds(100)
                                           : std::chrono::milliseconds(1000);
    idle_replans = 0;
    if (auto r = pool.Wait(wait)) {
      if (!r->job.replica) --screens_running;
      replan = plan != nullptr;
      XW_RETURN_IF_ERROR(HandleResult(std::move(*r), subs, sink, plan, obs));
    }
  }
  if (interrupted) return Status::Cancelled("the search was interrupted");
  return Status::OK();
}

}  // namespace internal

namespace {

using internal::Budget;
using internal::ByteReader;
using internal::ByteWriter;
using internal::HistoryEntry;
using internal::SearchStore;
using internal::TrialContext;

Status CheckOptions(const DriverOptions& o) {
  if (o.jobs < 0)
    return Status::InvalidArgument("--jobs must be >= 0 (0 = automatic)");
  if (o.threads < 0)
    return Status::InvalidArgument("--threads must be >= 0 (0 = automatic)");
  if (o.trials_per_subspace < 0)
    return Status::InvalidArgument("--trials-per-subspace must be >= 1");
  if (o.max_trials < 0)
    return Status::InvalidArgument("--max-trials must be >= 0");
  if (!(o.max_seconds >= 0))
    return Status::InvalidArgument("--max-seconds must be >= 0");
  if (o.resume_id && *o.resume_id <= 0)
    return Status::InvalidArgument("--resume: search ids are >= 1");
  if (o.dataset_dir.empty())
    return Status::InvalidArgument("--dataset: empty directory name");
  return Status::OK();
}

// Rank 0's start: options, config, data and profiles are checked before the
// dataset is touched, so bad input leaves it unchanged.
Status StartRoot(const DriverConfig& config, const DriverOptions& o,
                 std::unique_ptr<SearchStore>* store,
                 std::optional<TrialContext>* ctx) {
  XW_RETURN_IF_ERROR(CheckOptions(o));
  if (o.resume_id) {
    XW_ASSIGN_OR_RETURN(*store,
                        SearchStore::Resume(o.dataset_dir, *o.resume_id));
    XW_ASSIGN_OR_RETURN(TrialContext c,
                        internal::PrepareTrials((*store)->config()));
    ctx->emplace(std::move(c));
    return Status::OK();
  }
  XW_ASSIGN_OR_RETURN(auto checked,
                      ParseDriverConfigJson(DriverConfigToJson(config)));
  XW_ASSIGN_OR_RETURN(TrialContext c, internal::PrepareTrials(checked));
  ctx->emplace(std::move(c));
  XW_ASSIGN_OR_RETURN(*store, SearchStore::Create(o.dataset_dir, checked));
  return Status::OK();
}

Budget MakeBudget(const DriverConfig& c, const DriverOptions& o) {
  Budget b;
  b.trials_per_subspace = o.trials_per_subspace > 0
                              ? o.trials_per_subspace
                              : c.search.trials_per_subspace;
  b.max_trials = o.max_trials > 0 ? o.max_trials : c.search.budget.max_trials;
  b.max_seconds =
      o.max_seconds > 0 ? o.max_seconds : c.search.budget.max_seconds;
  b.subspaces = NumSearchSubspaces(c.search);
  return b;
}

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

// A failure on one rank of several ends them all (the others would wait).
[[noreturn]] void AbortAll(Cluster& cluster, const Status& s) {
  std::fprintf(stderr, "xwires: error: rank %d: %s\n", cluster.rank(),
               s.message().c_str());
  std::fflush(stderr);
  cluster.Abort(s.code() == Status::Code::kInternal ||
                        s.code() == Status::Code::kIOError
                    ? 1
                    : 2);
  std::abort();  // Abort does not return
}

}  // namespace

Result<SearchSummary> RunSearch(const DriverConfig& config,
                                const DriverOptions& o, Cluster& cluster) {
  const bool root = cluster.rank() == 0;
  std::unique_ptr<SearchStore> store;
  std::optional<TrialContext> ctx;
  std::string payload;
  if (root) {
    Status s = StartRoot(config, o, &store, &ctx);
    ByteWriter w;
    w.U64(s.ok());
    if (s.ok()) {
      w.Str(DriverConfigToJson(store->config()));
      w.I64(store->search_id());
      w.Str(internal::EncodeHistory(store->history()));
    } else {
      w.I64(static_cast<int64_t>(s.code()));
      w.Str(s.message());
    }
    payload = std::move(w.bytes());
    cluster.Broadcast(&payload);
    if (!s.ok()) return s;
  } else {
    cluster.Broadcast(&payload);
  }
  ByteReader r(payload);
  const bool ok = r.U64() != 0;
  if (!ok) {
    const auto code = static_cast<Status::Code>(r.I64());
    return Status(code, r.Str());
  }
  const std::string config_json = r.Str();
  const int64_t search_id = r.I64();
  auto history = internal::DecodeHistory(r.Str());
  if (!history.ok()) AbortAll(cluster, history.status());
  if (!root) {
    auto c = ParseDriverConfigJson(config_json);
    if (!c.ok()) AbortAll(cluster, c.status());
    auto prepared = internal::PrepareTrials(*c);
    if (!prepared.ok()) AbortAll(cluster, prepared.status());
    ctx.emplace(std::move(prepared).value());
  }
  const Budget budget = MakeBudget(ctx->config, o);
  const int threads =
      o.threads > 0
          ? o.threads
          : std::max(1, HardwareThreads() / std::max(1, cluster.local_size()));
  const int jobs = o.jobs > 0 ? o.jobs : std::min(4, threads);

  SearchSummary summary;
  summary.search_id = search_id;
  if (!root) {
    internal::RemoteSink sink(cluster);
    Status s = internal::RunRank(*ctx, *history, budget, cluster.rank(),
                                 cluster.size(), jobs, threads, sink);
    if (!s.ok()) AbortAll(cluster, s);
    sink.Done();
    cluster.Barrier();
    summary.is_root = false;
    return summary;
  }
  StartMessage(*store, budget, o, cluster.size(), jobs,
               internal::SplitThreads(threads, jobs));
  internal::Coordinator coord(*store, cluster, budget, o);
  // The two-stage schedule: on one process its replicas share the workers
  // with the screening and steer the GPs; under MPI rank 0 trains them
  // after the screening (the GPs of the other ranks are done by then).
  std::unique_ptr<internal::TwoStage> plan;
  const ScheduleOptions& sched = ctx->config.schedule;
  if (IsTwoStage(sched, ctx->config.search.objective)) {
    auto p = internal::TwoStage::Create(*ctx, store->dataset(), store->history());
    if (!p.ok()) {
      if (cluster.size() > 1) AbortAll(cluster, p.status());
      return p.status();
    }
    plan = std::move(p).value();
    coord.set_two_stage(plan.get());
    if (o.on_message) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "two-stage schedule: the top %g%% of every %d proposals replicated to "
                    "K = %d (%s)%s, the final top %d confirmed with %d fresh %s replicas "
                    "(%lld..%lld)",
                    sched.top_share * 100, sched.round, sched.replicas, sched.perturb.c_str(),
                    cluster.size() > 1 ? " after the screening" : "", sched.confirm_top,
                    sched.confirm_replicas, sched.confirm_perturb.c_str(),
                    static_cast<long long>(ConfirmFirstReplica(sched)),
                    static_cast<long long>(ConfirmFirstReplica(sched) + sched.confirm_replicas -
                                           1));
      o.on_message(buf);
    }
  }
  const bool in_loop = plan != nullptr && cluster.size() == 1;
  Status s = internal::RunRank(*ctx, *history, budget, 0, cluster.size(), jobs,
                               threads, coord, in_loop ? plan.get() : nullptr);
  if (s.ok() && plan != nullptr && !in_loop) {
    s = internal::RunRank(*ctx, {}, budget, 0, 1, jobs, threads, coord, plan.get(),
                          /*screen=*/false);
  }
  if (!s.ok()) {
    if (cluster.size() > 1) AbortAll(cluster, s);
    const bool interrupted = s.code() == Status::Code::kCancelled;
    (void)store->SetStatus(interrupted ? "interrupted" : "failed");
    if (interrupted) {
      const std::string id = std::to_string(search_id);
      return Status::Cancelled("search " + id + " was interrupted (resume search " + id +
                               " to finish it)");
    }
    return s;
  }
  summary.finished = coord.finished();
  summary.failed = coord.failed();
  summary.best = coord.best();
  summary.best_trial = coord.best_trial();
  if (plan != nullptr) summary.replicas = plan->replicas_stored();
  summary.status = summary.finished + summary.failed >= budget.Planned()
                       ? "done"
                       : "stopped";
  Status st = store->SetStatus(summary.status);
  cluster.Barrier();
  if (!st.ok()) return st;
  return summary;
}

}  // namespace xw::hpo
