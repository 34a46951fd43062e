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

// Rebuilds the optimiser of a subspace of this rank whose trial (of proposal
// `r.proposal`) now has replica statistics (RebuildOptimizer), keeping the
// gp_hedge portfolio.
Status Retell(const SearchConfig& sc, std::map<int, SubspaceState>& subs, const Retold& r,
              const ObservationOf& obs) {
  auto it = subs.find(r.subspace);
  if (it == subs.end()) return Status::OK();
  SubspaceState& st = it->second;
  XW_ASSIGN_OR_RETURN(GpOptimizer opt, RebuildOptimizer(sc, r.subspace, st.told, obs));
  XW_RETURN_IF_ERROR(opt.set_hedge_state(st.opt->hedge_state()));
  st.opt.emplace(std::move(opt));
  return Status::OK();
}

Status HandleResult(JobResult r, std::map<int, SubspaceState>& subs, TrialSink& sink,
                    const ObservationOf& obs) {
  if (r.job.replica) return sink.ReplicaDone(*r.job.replica, std::move(r.replica), r.seconds);
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
  st.told.push_back({r.job.pending_id, r.job.x, objective});
  TellTrial(*st.opt, st.told.back(), obs);
  return Status::OK();
}

}  // namespace

Status RunRank(const TrialContext& ctx,
               const std::vector<HistoryEntry>& history, const Budget& budget,
               int rank, int ranks, int jobs, int threads, TrialSink& sink) {
  const SearchConfig& sc = ctx.config.search;
  const ObservationOf obs = [&sink](int64_t p) { return sink.Observation(p); };
  std::map<int, SubspaceState> subs;
  for (int s = rank; s < budget.subspaces; s += ranks) {
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
      st.told.push_back({asked, e.x, e.objective});
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
  bool stop = false, interrupted = false;
  int screens_running = 0;
  for (;;) {
    if (!interrupted && sink.StopRequested()) {
      interrupted = true;
      pool.Cancel();
    }
    if (!interrupted) {
      // This rank's screening has ended when it can start no proposal and
      // none is under way.
      const bool ended = resume.empty() && screens_running == 0 &&
                         (stop || Pick(subs, budget.trials_per_subspace) == nullptr);
      std::vector<Retold> retold;
      XW_RETURN_IF_ERROR(sink.UpdateReplicas(ended, &retold));
      for (const Retold& r : retold) XW_RETURN_IF_ERROR(Retell(sc, subs, r, obs));
    }
    int slot;
    while (!interrupted && (slot = pool.IdleSlot()) >= 0) {
      // Replicas first: their LCBs steer the GPs.
      XW_ASSIGN_OR_RETURN(std::optional<ReplicaTask> replica, sink.TakeReplica());
      if (replica) {
        pool.Submit(slot, Job{0, 0, {}, std::move(replica)});
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
        stop = true;  // screening may have ended
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
      // Replica work left (here or on another rank): wait for it.
      if (interrupted || sink.ReplicasDone()) {
        if (sink.OthersDone()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const auto wait = sink.needs_polling() ? std::chrono::milliseconds(20)
                      : sink.stoppable()   ? std::chrono::milliseconds(100)
                                           : std::chrono::milliseconds(1000);
    if (auto r = pool.Wait(wait)) {
      if (!r->job.replica) --screens_running;
      sink.Account(r->job, r->cpu_seconds);
      XW_RETURN_IF_ERROR(HandleResult(std::move(*r), subs, sink, obs));
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
  // The two-stage schedule (rank 0): its replicas share every rank's
  // workers with the screening and steer the GPs.
  std::unique_ptr<internal::TwoStage> plan;
  std::vector<internal::Retold> observations;
  if (root) {
    Status s = StartRoot(config, o, &store, &ctx);
    if (s.ok() && IsTwoStage(ctx->config.schedule, ctx->config.search.objective)) {
      auto p = internal::StartTwoStage(*ctx, *store, o, cluster.size());
      if (p.ok()) plan = std::move(p).value();
      s = p.status();
    }
    ByteWriter w;
    w.U64(s.ok());
    if (s.ok()) {
      w.Str(DriverConfigToJson(store->config()));
      w.I64(store->search_id());
      w.Str(internal::EncodeHistory(store->history()));
      internal::EncodeObservations(plan ? plan->Observations() : observations, w);
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
  Status decoded = internal::DecodeObservations(r, &observations);
  if (!decoded.ok()) AbortAll(cluster, decoded);
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
    internal::RemoteSink sink(
        cluster, cluster.rank(), cluster.size(),
        IsTwoStage(ctx->config.schedule, ctx->config.search.objective), observations);
    Status s = internal::RunRank(*ctx, *history, budget, cluster.rank(),
                                 cluster.size(), jobs, threads, sink);
    if (!s.ok()) AbortAll(cluster, s);
    sink.Done();
    cluster.Barrier();
    summary.is_root = false;
    return summary;
  }
  internal::StartMessage(*store, budget, o, cluster.size(), jobs,
               internal::SplitThreads(threads, jobs));
  internal::Coordinator coord(*store, cluster, budget, o);
  coord.set_two_stage(plan.get());
  Status s = internal::RunRank(*ctx, *history, budget, 0, cluster.size(), jobs,
                               threads, coord);
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
  if (plan != nullptr) {
    summary.replicas = plan->replicas_stored();
    if (o.on_message) o.on_message(coord.CostLine());
  }
  summary.status = summary.finished + summary.failed >= budget.Planned()
                       ? "done"
                       : "stopped";
  Status st = store->SetStatus(summary.status);
  cluster.Barrier();
  if (!st.ok()) return st;
  return summary;
}

}  // namespace xw::hpo
