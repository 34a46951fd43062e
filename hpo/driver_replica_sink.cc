// The two-stage schedule across the ranks of a search (driver_run.h).
//
// Rank 0 owns the schedule (TwoStage) and is the only writer. Every rank
// trains replicas: before asking its GPs for a new proposal, a rank with an
// idle worker takes a replica from rank 0's queue (rank 0 directly, the
// others by a kTagWantReplica / kTagReplicaReply round trip), so a round's
// replicas start as soon as its selection is known, interleaved with the
// next proposals. A rank > 0 sends the trained replica back
// (kTagReplicaResult) and rank 0 stores it; when a trial's selection
// statistics are stored, rank 0 re-tells the GP of the rank that owns its
// subspace (kTagRetell). The screening has ended when every rank can start
// no proposal and has none under way (kTagScreenDone from ranks > 0); the
// last, partial round then closes and the confirmations are planned. A rank
// > 0 ends when rank 0 answers that no replica work is left.
#include <cstdio>

#include "driver_run.h"

namespace xw::hpo::internal {
namespace {

// Reply codes of kTagReplicaReply.
constexpr uint64_t kNoneNow = 0, kTask = 1, kNoneEver = 2;

void PutTask(ByteWriter& w, const ReplicaTask& t) {
  w.I64(t.trial_id);
  w.U64(t.x.size());
  for (double v : t.x) w.F64(v);
  w.I64(t.model);
  w.I64(t.replica);
  w.I64(static_cast<int64_t>(t.family));
  w.U64(t.confirm);
}

bool GetTask(ByteReader& r, ReplicaTask* t) {
  t->trial_id = r.I64();
  const uint64_t n = r.U64();
  if (!r.ok() || n > 64) return false;
  t->x.resize(n);
  for (double& v : t->x) v = r.F64();
  t->model = static_cast<int>(r.I64());
  t->replica = r.I64();
  const int64_t family = r.I64();
  t->confirm = r.U64() != 0;
  if (family < 0 || family > static_cast<int64_t>(PerturbFamily::kOrder))
    return false;
  t->family = static_cast<PerturbFamily>(family);
  return r.ok() && (t->model == 0 || t->model == 1);
}

// A replica row without weights (the search stores none for replicas).
void PutRecord(ByteWriter& w, const ReplicaRecord& rec) {
  w.Str(rec.profile);
  w.Str(rec.family);
  w.I64(rec.replica);
  w.Str(rec.params_json);
  w.Str(rec.status);
  w.F64(rec.test_acc);
  w.F64(rec.test_loss);
  w.I64(rec.first_nonfinite_step);
  w.U64(rec.curves.size());
  for (const EpochMetrics& e : rec.curves) {
    w.I64(e.epoch);
    for (double v : {e.train_loss_mean, e.train_loss_last, e.train_acc,
                     e.test_loss, e.test_acc})
      w.F64(v);
  }
  w.Str(std::string(rec.predictions.begin(), rec.predictions.end()));
  w.Str(rec.weights_sha256);
  w.F64(rec.wall_time_s);
  w.Str(rec.fingerprint_json);
}

bool GetRecord(ByteReader& r, ReplicaRecord* rec) {
  rec->profile = r.Str();
  rec->family = r.Str();
  rec->replica = r.I64();
  rec->params_json = r.Str();
  rec->status = r.Str();
  rec->test_acc = r.F64();
  rec->test_loss = r.F64();
  rec->first_nonfinite_step = r.I64();
  const uint64_t epochs = r.U64();
  if (!r.ok() || epochs > r.remaining() / 48) return false;
  rec->curves.resize(epochs);
  for (EpochMetrics& e : rec->curves) {
    e.epoch = static_cast<int>(r.I64());
    for (double* v : {&e.train_loss_mean, &e.train_loss_last, &e.train_acc,
                      &e.test_loss, &e.test_acc})
      *v = r.F64();
  }
  const std::string pred = r.Str();
  rec->predictions.assign(pred.begin(), pred.end());
  rec->weights_sha256 = r.Str();
  rec->wall_time_s = r.F64();
  rec->fingerprint_json = r.Str();
  return r.ok() && r.at_end();
}

Status Malformed(int source, const char* what) {
  return Status::Corruption("malformed " + std::string(what) +
                            " message from rank " + std::to_string(source));
}

}  // namespace

Result<std::unique_ptr<TwoStage>> StartTwoStage(const TrialContext& ctx,
                                                SearchStore& store,
                                                const DriverOptions& o,
                                                int ranks) {
  XW_ASSIGN_OR_RETURN(std::unique_ptr<TwoStage> plan,
                      TwoStage::Create(ctx, store.dataset(), store.history()));
  if (o.on_message) {
    const ScheduleOptions& s = ctx.config.schedule;
    char buf[320];
    std::snprintf(
        buf, sizeof buf,
        "two-stage schedule: the top %g%% of every %d proposals replicated to "
        "K = %d (%s)%s, the final top %d confirmed with %d fresh %s replicas "
        "(%lld..%lld)",
        s.top_share * 100, s.round, s.replicas, s.perturb.c_str(),
        ranks > 1 ? " on every rank" : "", s.confirm_top, s.confirm_replicas,
        s.confirm_perturb.c_str(),
        static_cast<long long>(ConfirmFirstReplica(s)),
        static_cast<long long>(ConfirmFirstReplica(s) + s.confirm_replicas -
                               1));
    o.on_message(buf);
  }
  return plan;
}

void EncodeObservations(const std::vector<Retold>& obs, ByteWriter& w) {
  w.U64(obs.size());
  for (const Retold& o : obs) {
    w.I64(o.subspace);
    w.I64(o.proposal);
    w.F64(o.obs.lcb);
    w.F64(o.obs.se2);
    w.F64(o.obs.p_value);
  }
}

Status DecodeObservations(ByteReader& r, std::vector<Retold>* obs) {
  const uint64_t n = r.U64();
  if (!r.ok() || n > r.remaining() / 40)
    return Status::Corruption("malformed observations");
  obs->resize(n);
  for (Retold& o : *obs) {
    o.subspace = static_cast<int>(r.I64());
    o.proposal = r.I64();
    o.obs.lcb = r.F64();
    o.obs.se2 = r.F64();
    o.obs.p_value = r.F64();
  }
  if (!r.ok()) return Status::Corruption("malformed observations");
  return Status::OK();
}

// ---- rank 0

Status Coordinator::UpdateReplicas(bool screening_ended,
                                   std::vector<Retold>* retold) {
  if (plan_ == nullptr) return Status::OK();
  const bool ended = screening_ended && screens_done_ >= cluster_.size() - 1;
  if (!plan_dirty_ && ended == planned_ended_) return Status::OK();
  std::vector<Retold> all;
  XW_RETURN_IF_ERROR(plan_->Plan(ended, &all));
  plan_dirty_ = false;
  planned_ended_ = ended;
  for (const Retold& r : all) {
    const int owner = r.subspace % cluster_.size();
    if (owner == 0) {
      retold->push_back(r);
      continue;
    }
    ByteWriter w;
    EncodeObservations({r}, w);
    cluster_.Send(owner, kTagRetell, w.bytes());
  }
  if (ended && !plan_->finished() && plan_->in_flight() == 0) {
    return Status::Internal(
        "the two-stage schedule has work left but planned none");
  }
  return Status::OK();
}

Result<std::optional<ReplicaTask>> Coordinator::TakeReplica() {
  if (plan_ == nullptr) return std::optional<ReplicaTask>();
  return plan_->Next();
}

Status Coordinator::ReplicaDone(const ReplicaTask& t, Result<ReplicaResult> r,
                                double seconds) {
  return StoreReplica(t, std::move(r), seconds, "");
}

Status Coordinator::StoreReplica(const ReplicaTask& t, Result<ReplicaResult> r,
                                 double seconds, const std::string& rank_note) {
  if (plan_ == nullptr)
    return Status::Internal("a replica ran without a two-stage schedule");
  plan_dirty_ = true;
  if (!r.ok() && r.status().code() == Status::Code::kCancelled) {
    plan_->Dropped(t);
    return Status::OK();
  }
  if (!r.ok()) {
    return r.status().WithContext("trial " + std::to_string(t.trial_id) +
                                  " replica " + std::to_string(t.replica));
  }
  ReplicaRecord rec = ToReplicaRecord(t.trial_id, "", PerturbFamilyName(t.family), *r,
                                      /*keep_weights=*/false);
  return StoreRecord(t, std::move(rec), seconds, rank_note);
}

Status Coordinator::StoreRecord(const ReplicaTask& t, ReplicaRecord rec,
                                double seconds, const std::string& rank_note) {
  std::string note;
  XW_RETURN_IF_ERROR(plan_->Store(t, std::move(rec), &note));
  char buf[64];
  std::snprintf(buf, sizeof buf, "; %.1f s", seconds);
  Note(note + buf + rank_note);
  return Status::OK();
}

Status Coordinator::ServeReplicas(int source, int tag,
                                  const std::string& bytes) {
  ByteReader r(bytes);
  if (tag == kTagScreenDone) {
    ++screens_done_;
    plan_dirty_ = true;
    return Status::OK();
  }
  if (tag == kTagWantReplica) {
    ByteWriter w;
    std::optional<ReplicaTask> t;
    if (plan_ != nullptr) t = plan_->Next();
    if (t) {
      w.U64(kTask);
      PutTask(w, *t);
    } else {
      w.U64(ReplicasDone() ? kNoneEver : kNoneNow);
    }
    cluster_.Send(source, kTagReplicaReply, w.bytes());
    return Status::OK();
  }
  if (tag != kTagReplicaResult || plan_ == nullptr) {
    return Status::Internal("unexpected message tag " + std::to_string(tag) +
                            " from rank " + std::to_string(source));
  }
  ReplicaTask t;
  if (!GetTask(r, &t)) return Malformed(source, "replica result");
  const double seconds = r.F64();
  const auto code = static_cast<Status::Code>(r.I64());
  const std::string message = r.Str();
  if (!r.ok()) return Malformed(source, "replica result");
  const std::string rank_note = " (rank " + std::to_string(source) + ")";
  if (code != Status::Code::kOk) {
    plan_dirty_ = true;
    return StoreReplica(t, Status(code, message), seconds, rank_note);
  }
  ReplicaRecord rec;
  if (!GetRecord(r, &rec)) return Malformed(source, "replica result");
  rec.trial_id = t.trial_id;
  plan_dirty_ = true;
  return StoreRecord(t, std::move(rec), seconds, rank_note);
}

void Coordinator::Account(const Job& job, double cpu_seconds) {
  const int k = !job.replica ? 0 : job.replica->confirm ? 2 : 1;
  cpu_[k] += cpu_seconds;
  jobs_[k] += k == 0 ? 2 : 1;  // a screened pair is two trainings
}

std::string Coordinator::CostLine() const {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "worker CPU time%s: screening %.1f s (%lld trainings), "
                "selection replicas "
                "%.1f s (%lld), confirmation replicas %.1f s (%lld); the "
                "search's trainings "
                "cost %.2fx its screening",
                cluster_.size() > 1 ? " of rank 0" : "", cpu_[0],
                static_cast<long long>(jobs_[0]), cpu_[1],
                static_cast<long long>(jobs_[1]), cpu_[2],
                static_cast<long long>(jobs_[2]),
                cpu_[0] > 0 ? (cpu_[0] + cpu_[1] + cpu_[2]) / cpu_[0] : 0.0);
  return buf;
}

// ---- ranks r > 0

RemoteSink::RemoteSink(Cluster& cluster, int rank, int ranks, bool two_stage,
                       const std::vector<Retold>& observations)
    : cluster_(cluster), rank_(rank), ranks_(ranks), two_stage_(two_stage) {
  for (const Retold& o : observations) {
    if (o.subspace % ranks_ == rank_) observations_[o.proposal] = o.obs;
  }
}

Status RemoteSink::UpdateReplicas(bool screening_ended,
                                  std::vector<Retold>* retold) {
  if (!two_stage_) return Status::OK();
  if (screening_ended && !screen_done_sent_) {
    cluster_.Send(0, kTagScreenDone, "");
    screen_done_sent_ = true;
  }
  // Outside a request, rank 0 sends this rank nothing but observations.
  int source = 0, tag = 0;
  std::string bytes;
  while (cluster_.TryRecv(&source, &tag, &bytes)) {
    if (tag != kTagRetell) {
      return Status::Internal("unexpected message tag " + std::to_string(tag) +
                              " from rank " + std::to_string(source));
    }
    ByteReader r(bytes);
    std::vector<Retold> obs;
    XW_RETURN_IF_ERROR(DecodeObservations(r, &obs));
    for (const Retold& o : obs) {
      observations_[o.proposal] = o.obs;
      retold->push_back(o);
    }
  }
  return Status::OK();
}

Result<std::optional<ReplicaTask>> RemoteSink::TakeReplica() {
  if (!two_stage_ || no_more_replicas_) return std::optional<ReplicaTask>();
  // After a "none now", ask again a little later rather than at every poll.
  const auto now = std::chrono::steady_clock::now();
  if (now < next_ask_) return std::optional<ReplicaTask>();
  cluster_.Send(0, kTagWantReplica, "");
  const std::string reply = cluster_.Recv(0, kTagReplicaReply);
  ByteReader r(reply);
  const uint64_t code = r.U64();
  if (!r.ok()) return Status::Corruption("malformed replica reply from rank 0");
  if (code == kNoneEver) no_more_replicas_ = true;
  if (code != kTask) {
    next_ask_ = now + std::chrono::milliseconds(200);
    return std::optional<ReplicaTask>();
  }
  ReplicaTask t;
  if (!GetTask(r, &t))
    return Status::Corruption("malformed replica reply from rank 0");
  return std::optional<ReplicaTask>(std::move(t));
}

Status RemoteSink::ReplicaDone(const ReplicaTask& t, Result<ReplicaResult> r,
                               double seconds) {
  ByteWriter w;
  PutTask(w, t);
  w.F64(seconds);
  w.I64(static_cast<int64_t>(r.status().code()));
  w.Str(r.status().message());
  if (r.ok()) {
    // Rank 0 fills in the profile's name as it stores.
    PutRecord(w, ToReplicaRecord(t.trial_id, "", PerturbFamilyName(t.family), *r,
                                      /*keep_weights=*/false));
  }
  cluster_.Send(0, kTagReplicaResult, w.bytes());
  return Status::OK();
}

std::optional<ReplicaObservation> RemoteSink::Observation(
    int64_t proposal) const {
  auto it = observations_.find(proposal);
  if (it == observations_.end()) return std::nullopt;
  return it->second;
}

}  // namespace xw::hpo::internal
