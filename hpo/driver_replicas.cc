// The two-stage schedule on rank 0 (driver_replicas.h).
#include "driver_replicas.h"

#include "driver_run.h"

#include <cmath>

#include "xwires/dataset/store/replicas.h"

namespace xw::hpo::internal {
namespace {

std::vector<uint8_t> Labels(const TrialContext& ctx) {
  std::vector<uint8_t> out;
  for (int32_t l : ctx.data.test.labels) out.push_back(static_cast<uint8_t>(l));
  return out;
}

}  // namespace

Result<std::unique_ptr<TwoStage>> TwoStage::Create(const TrialContext& ctx, Dataset& ds,
                                                   const std::vector<HistoryEntry>& history) {
  std::unique_ptr<TwoStage> t(new TwoStage(ctx, ds));
  for (const HistoryEntry& e : history) {
    Proposal p;
    p.order = e.status == "done" && e.pending_ref > 0 ? e.pending_ref : e.id;
    p.ended = e.status != "pending";
    if (e.status == "done") {
      p.trial_id = e.id;
      p.divergence = e.objective;
      t->points_[e.id] = {e.x, e.subspace, p.order};
    }
    t->proposals_[p.order] = p;
  }
  // Statistics stored before a restart.
  const ScheduleOptions& s = ctx.config.schedule;
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> stats, LoadReplicaStats(ds));
  for (const ReplicaStatsRecord& r : stats) {
    if (!t->points_.count(r.trial_id)) continue;
    if (r.family == s.perturb && r.first_replica == 0 && r.k_a == s.replicas &&
        r.k_b == s.replicas) {
      t->selection_[r.trial_id] = {r.stats.lcb, r.stats.se2, r.stats.permutation_p};
    } else if (r.family == s.confirm_perturb && r.first_replica == ConfirmFirstReplica(s) &&
               r.k_a == s.confirm_replicas && r.k_b == s.confirm_replicas) {
      t->confirmed_.insert(r.trial_id);
    }
  }
  return t;
}

void TwoStage::OnBegin(int64_t pending_id) { proposals_[pending_id] = Proposal{pending_id}; }

void TwoStage::OnFinish(int64_t pending_id, int64_t trial_id, int subspace,
                        const std::vector<double>& x, double divergence) {
  proposals_[pending_id] = Proposal{pending_id, trial_id, true, divergence};
  points_[trial_id] = {x, subspace, pending_id};
}

void TwoStage::OnFail(int64_t pending_id) {
  proposals_[pending_id] = Proposal{pending_id, 0, true, 0};
}

std::optional<ReplicaObservation> TwoStage::ObservationOfProposal(int64_t proposal) const {
  auto p = proposals_.find(proposal);
  if (p == proposals_.end() || p->second.trial_id == 0) return std::nullopt;
  auto it = selection_.find(p->second.trial_id);
  if (it == selection_.end()) return std::nullopt;
  return it->second;
}

std::vector<Retold> TwoStage::Observations() const {
  std::vector<Retold> out;
  for (const auto& [t, obs] : selection_) {
    const Point& p = points_.at(t);
    out.push_back({p.subspace, p.proposal, obs});
  }
  return out;
}

std::optional<ReplicaTask> TwoStage::Next() {
  if (queue_.empty()) return std::nullopt;
  ReplicaTask t = std::move(queue_.front());
  queue_.pop_front();
  return t;
}

Status TwoStage::Plan(bool screening_ended, std::vector<Retold>* retold) {
  const ScheduleOptions& s = ctx_.config.schedule;
  XW_ASSIGN_OR_RETURN(PerturbFamily select_family, ParsePerturbFamily(s.perturb));
  XW_ASSIGN_OR_RETURN(PerturbFamily confirm_family, ParsePerturbFamily(s.confirm_perturb));
  std::vector<Proposal> all;
  for (const auto& [order, p] : proposals_) all.push_back(p);
  bool selected_done = true;
  for (int64_t t : SelectForReplication(all, s, screening_ended)) {
    if (selection_.count(t)) continue;
    XW_ASSIGN_OR_RETURN(bool done, Need(t, select_family, 0, s.replicas, false, retold));
    selected_done &= done;
  }
  finished_ = false;
  if (!screening_ended || !selected_done) return Status::OK();
  // The final top pairs, by the LCB of their selection replicas, confirmed
  // with replicas none of which was used to select: K..K+Kc-1 of the
  // selection's family, or 1..Kc of another (ConfirmFirstReplica).
  std::vector<Replicated> replicated;
  for (const auto& [t, obs] : selection_) replicated.push_back({t, obs.lcb, obs.p_value});
  bool confirmed_done = true;
  for (int64_t t : SelectForConfirmation(replicated, s.confirm_top)) {
    if (confirmed_.count(t)) continue;
    XW_ASSIGN_OR_RETURN(bool done,
                        Need(t, confirm_family, ConfirmFirstReplica(s), s.confirm_replicas,
                             true, retold));
    confirmed_done &= done;
  }
  finished_ = confirmed_done;
  return Status::OK();
}

Result<bool> TwoStage::Need(int64_t t, PerturbFamily family, int64_t first, int k, bool confirm,
                            std::vector<Retold>* retold) {
  const std::string name = PerturbFamilyName(family);
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> stored, LoadReplicas(ds_, t, name));
  std::set<std::pair<std::string, int64_t>> have;
  for (const ReplicaRecord& r : stored) have.insert({r.profile, r.replica});
  bool complete = true;
  for (int m = 0; m < 2; ++m) {
    const std::string& profile = ctx_.profiles[m].name;
    for (int64_t r = first; r < first + k; ++r) {
      if (have.count({profile, r})) continue;
      const Key key{t, m, name, r};
      if (in_flight_.count(key)) {
        complete = false;
        continue;
      }
      if (r == 0) {
        XW_ASSIGN_OR_RETURN(bool reused, ReplicaZeroFromTrial(t, m, name));
        if (reused) continue;
      }
      complete = false;
      in_flight_.insert(key);
      queue_.push_back(ReplicaTask{t, points_.at(t).x, m, r, family, confirm});
    }
  }
  if (!complete) return false;
  XW_RETURN_IF_ERROR(StoreStats(t, name, first, k, confirm, retold));
  return true;
}

Result<bool> TwoStage::ReplicaZeroFromTrial(int64_t t, int m, const std::string& family) {
  XW_ASSIGN_OR_RETURN(TrialRow row, ds_.GetTrial(t));
  const Profile& profile = ctx_.profiles[m];
  const ModelRow* model = row.Model(profile.name);
  if (model == nullptr || !model->has_weights || model->status != "ok") return false;
  XW_ASSIGN_OR_RETURN(NamedTensors weights, ds_.LoadWeights(model->id));
  XW_ASSIGN_OR_RETURN(std::vector<EpochMetrics> curves, ds_.LoadCurves(model->id));
  const TrainOptions o = TrialTrainOptions(ctx_.config, points_.at(t).x, 1);
  XW_ASSIGN_OR_RETURN(std::vector<int32_t> pred, PredictTestLabels(ctx_, o, profile, weights));
  const std::vector<int32_t>& labels = ctx_.data.test.labels;
  int64_t right = 0;
  for (size_t i = 0; i < pred.size() && i < labels.size(); ++i) right += pred[i] == labels[i];
  // The stored accuracy must be what these predictions give; otherwise
  // (never expected) the replica is trained again.
  if (pred.size() != labels.size() ||
      std::fabs(static_cast<double>(right) / labels.size() - model->test_acc) > 1e-9) {
    return false;
  }
  ReplicaRecord rec;
  rec.trial_id = t;
  rec.profile = profile.name;
  rec.family = family;
  rec.replica = 0;
  rec.params_json = Perturbation{}.ParamsJson();
  rec.status = "ok";
  rec.test_acc = model->test_acc;
  rec.test_loss = model->test_loss;
  rec.curves = std::move(curves);
  rec.predictions.assign(pred.begin(), pred.end());
  rec.weights_sha256 = model->weights_sha256;
  rec.wall_time_s = model->wall_time_s;
  rec.fingerprint_json = model->fingerprint_json;
  XW_RETURN_IF_ERROR(StoreReplica(ds_, rec).status());
  return true;
}

Status TwoStage::StoreStats(int64_t t, const std::string& family, int64_t first, int k,
                            bool confirm, std::vector<Retold>* retold) {
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> stored,
                      LoadReplicas(ds_, t, family, /*with_data=*/true));
  std::vector<ReplicaRecord> side[2];
  for (ReplicaRecord& r : stored) {
    if (r.replica < first || r.replica >= first + k) continue;
    for (int m = 0; m < 2; ++m) {
      if (r.profile == ctx_.profiles[m].name) side[m].push_back(r);
    }
  }
  ReplicaStatsRecord rec;
  rec.trial_id = t;
  rec.profile_a = ctx_.profiles[0].name;
  rec.profile_b = ctx_.profiles[1].name;
  rec.family = family;
  rec.k_a = rec.k_b = k;
  rec.first_replica = first;
  rec.num_classes = ctx_.data.test.num_classes;
  rec.test_labels = Labels(ctx_);
  XW_ASSIGN_OR_RETURN(rec.stats, ReplicaPairStatistics(side[0], side[1], rec.test_labels,
                                                       rec.num_classes));
  XW_RETURN_IF_ERROR(StoreReplicaStats(ds_, rec));
  if (confirm) {
    confirmed_.insert(t);
  } else {
    selection_[t] = {rec.stats.lcb, rec.stats.se2, rec.stats.permutation_p};
    const Point& p = points_.at(t);
    retold->push_back({p.subspace, p.proposal, selection_[t]});
  }
  return Status::OK();
}

Status TwoStage::Store(const ReplicaTask& t, ReplicaRecord rec, std::string* note) {
  const std::string family = PerturbFamilyName(t.family);
  in_flight_.erase(Key{t.trial_id, t.model, family, t.replica});
  const std::string& profile = ctx_.profiles[t.model].name;
  rec.trial_id = t.trial_id;
  rec.profile = profile;
  rec.family = family;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s trial %lld %s replica %lld (%s): %.4f",
                t.confirm ? "confirm" : "replicate", static_cast<long long>(t.trial_id),
                profile.c_str(), static_cast<long long>(t.replica), family.c_str(),
                rec.test_acc);
  *note = buf;
  auto id = StoreReplica(ds_, rec);
  if (!id.ok() && id.status().code() != Status::Code::kAlreadyExists) return id.status();
  ++stored_;
  return Status::OK();
}

void TellTrial(GpOptimizer& opt, const ToldTrial& t, const ObservationOf& obs) {
  std::optional<ReplicaObservation> o;
  if (obs && t.proposal > 0) o = obs(t.proposal);
  // A point the optimiser cannot take (none expected) is still recorded.
  if (o) {
    (void)opt.Tell(t.x, LossFromDivergence(o->lcb), o->se2);
  } else {
    (void)opt.Tell(t.x, LossFromDivergence(t.divergence));
  }
}

Result<GpOptimizer> RebuildOptimizer(const SearchConfig& sc, int subspace,
                                     const std::vector<ToldTrial>& told,
                                     const ObservationOf& obs) {
  XW_ASSIGN_OR_RETURN(SearchSpace space, SearchSubspace(sc, subspace));
  XW_ASSIGN_OR_RETURN(GpOptimizer opt,
                      GpOptimizer::Create(space, SubspaceOptions(sc, subspace)));
  for (const ToldTrial& t : told) TellTrial(opt, t, obs);
  return opt;
}

void TwoStage::Dropped(const ReplicaTask& t) {
  in_flight_.erase(Key{t.trial_id, t.model, PerturbFamilyName(t.family), t.replica});
}

}  // namespace xw::hpo::internal
