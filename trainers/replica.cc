// Replicas: perturbation families and the replica training run (replica.h).
#include "xwires/trainers/replica.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "xwires/core/rng.h"

namespace xw {
namespace {

using Json = nlohmann::ordered_json;

ReduceSpec Lanes(int k, bool fma) {
  ReduceSpec s;
  s.order = ReduceOrder::kLanes;
  s.lanes = k;
  s.fma = fma;
  return s;
}

// The first trainable weight (rank >= 2: conv OIHW or linear [out, in]) in
// state_dict order: the first layer's weights.
const StateEntry* FirstWeight(const Model& model) {
  for (const StateEntry& e : model.state()) {
    if (e.grad != nullptr && e.value != nullptr && e.value->rank() >= 2 &&
        (e.info.kind == ParamKind::kConvWeight || e.info.kind == ParamKind::kLinearWeight)) {
      return &e;
    }
  }
  return nullptr;
}

Json NudgeJson(const UlpNudge& n) {
  return {{"tensor", n.tensor},
          {"index", n.index},
          {"direction", n.direction},
          {"before", n.before},
          {"after", n.after}};
}

}  // namespace

Result<PerturbFamily> ParsePerturbFamily(const std::string& name) {
  if (name == "ulp") return PerturbFamily::kUlp;
  if (name == "seed") return PerturbFamily::kSeed;
  if (name == "order") return PerturbFamily::kOrder;
  return Status::InvalidArgument("unknown perturbation family '" + name +
                                 "' (expected ulp, seed or order)");
}

std::string PerturbFamilyName(PerturbFamily family) {
  switch (family) {
    case PerturbFamily::kUlp:
      return "ulp";
    case PerturbFamily::kSeed:
      return "seed";
    case PerturbFamily::kOrder:
      return "order";
  }
  return "?";
}

std::vector<ReduceSpec> AlternativeOrders(const Profile& profile) {
  const ReduceSpec& r = profile.kernels.reduce;
  std::vector<ReduceSpec> out;
  if (r.order == ReduceOrder::kLanes && r.lanes > 1) {
    // The vector widths of the CPUs ATen runs on, nearest first.
    const int widths[] = {16, 4, 8};
    for (int w : widths) {
      if (w != r.lanes) out.push_back(Lanes(w, r.fma));
    }
  } else if (r.order == ReduceOrder::kPairwise) {
    // Eigen's packet reductions on AVX2, AVX-512 and SSE.
    for (int w : {8, 16, 4}) out.push_back(Lanes(w, r.fma));
  }
  return out;
}

Status CheckPerturbation(const Profile& profile, PerturbFamily family) {
  if (family != PerturbFamily::kOrder || !AlternativeOrders(profile).empty()) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "--perturb order: profile '" + profile.name + "' reduces in the " +
      ReduceOrderName(profile.kernels.reduce) +
      " order, which defines it; it admits no other reduction order (use ulp or seed)");
}

Result<UlpNudge> ApplyUlpNudge(Model& model, uint64_t seed, uint64_t replica) {
  const StateEntry* e = FirstWeight(model);
  if (e == nullptr) {
    return Status::FailedPrecondition("model '" + model.arch() +
                                      "' has no conv or linear weight to nudge");
  }
  const Philox rng(seed, MixStream(StreamId("replica/ulp"), replica));
  const uint64_t draw = static_cast<uint64_t>(rng.U32(0)) << 32 | rng.U32(1);
  UlpNudge n;
  n.replica = replica;
  n.tensor = e->info.name;
  n.index = static_cast<int64_t>(draw % static_cast<uint64_t>(e->value->size()));
  n.direction = (rng.U32(2) & 1u) ? 1 : -1;
  float* v = e->value->data() + n.index;
  n.before = *v;
  const float toward = n.direction > 0 ? std::numeric_limits<float>::infinity()
                                       : -std::numeric_limits<float>::infinity();
  *v = std::nextafter(*v, toward);
  n.after = *v;
  return n;
}

std::string Perturbation::ParamsJson() const {
  Json j;
  if (replica == 0) {
    j["family"] = "none";
    return j.dump();
  }
  j["family"] = PerturbFamilyName(family);
  if (family == PerturbFamily::kSeed) j["seed"] = train_seed;
  if (family == PerturbFamily::kOrder) j["reduce"] = reduce;
  if (ulp) {
    const Json n = NudgeJson(nudge);  // named: items() does not extend its life
    for (const auto& [k, v] : n.items()) j[k] = v;
  }
  return j.dump();
}

Result<Perturbation> ResolvePerturbation(const Profile& profile, uint64_t seed,
                                         int64_t replica, PerturbFamily family) {
  if (replica < 0) {
    return Status::InvalidArgument("replica index must be >= 0, got " + std::to_string(replica));
  }
  Perturbation p;
  p.replica = replica;
  p.family = family;
  p.train_seed = seed;
  p.reduce = ReduceOrderName(profile.kernels.reduce);
  if (replica == 0) return p;
  XW_RETURN_IF_ERROR(CheckPerturbation(profile, family));
  const uint64_t r = static_cast<uint64_t>(replica);
  switch (family) {
    case PerturbFamily::kUlp:
      p.ulp = true;
      break;
    case PerturbFamily::kSeed:
      p.train_seed = MixStream(MixStream(StreamId("replica/seed"), seed), r);
      break;
    case PerturbFamily::kOrder: {
      const std::vector<ReduceSpec> alt = AlternativeOrders(profile);
      p.reduce = ReduceOrderName(alt[(r - 1) % alt.size()]);
      p.ulp = r > alt.size();  // the orders are used up: add replica r's nudge
      break;
    }
  }
  return p;
}

Result<ReplicaResult> TrainReplica(const Profile& profile, const DataSplits& data,
                                   const TrainOptions& options, int64_t replica,
                                   PerturbFamily family) {
  ReplicaResult out;
  XW_ASSIGN_OR_RETURN(out.perturbation,
                      ResolvePerturbation(profile, options.seed, replica, family));
  Perturbation& p = out.perturbation;
  Profile varied = profile;  // name and JSON stay: the profile is unchanged
  XW_ASSIGN_OR_RETURN(varied.kernels.reduce,
                      ParseReduceOrder(p.reduce, profile.kernels.reduce.fma));
  TrainOptions o = options;
  o.data_seed = DataSeed(options);  // the data stay those of the trial
  o.seed = p.train_seed;
  if (p.ulp) {
    const uint64_t key = options.seed;
    const uint64_t r = static_cast<uint64_t>(replica);
    auto chained = options.after_init;
    o.after_init = [&p, key, r, chained](Model& m) -> Status {
      if (chained) XW_RETURN_IF_ERROR(chained(m));
      XW_ASSIGN_OR_RETURN(p.nudge, ApplyUlpNudge(m, key, r));
      return Status::OK();
    };
  }
  auto trained = TrainProfile(varied, data, o);
  if (!trained.ok()) {
    return trained.status().WithContext("replica " + std::to_string(replica) + " (" +
                                        PerturbFamilyName(family) + ") of profile " +
                                        profile.name);
  }
  out.train = std::move(trained).value();
  return out;
}

ReplicaRecord ToReplicaRecord(int64_t trial_id, const std::string& profile,
                              const std::string& family, ReplicaResult& r,
                              bool keep_weights) {
  ReplicaRecord rec;
  rec.trial_id = trial_id;
  rec.profile = profile;
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

}  // namespace xw
