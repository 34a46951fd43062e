// Replicas of a trial: the same trial re-trained under one profile with one
// small change that the emulated framework itself treats as arbitrary, so
// that the spread of the replicas measures the chaos of training (the noise
// floor, docs/significance.md) and a cross-profile difference can be judged
// against it.
//
// Replica 0 is the trial exactly as trained (no change). Replica r >= 1
// applies one perturbation family:
//   seed  (default) a fresh training seed (init, dropout, shuffling) =
//         MixStream(MixStream(StreamId("replica/seed"), seed), r); the data
//         are unchanged (the caller loads them with the trial's data seed).
//         The only family that redraws the trial's arbitrary choices, so
//         the only one whose spread is the draw-to-draw noise in short runs
//         (docs/significance.md, the A/A calibration).
//   ulp   one element of the first weight tensor (state_dict
//         order: the first layer's conv or linear weight) moved by one ulp
//         with nextafter, after initialisation. The flat index and the
//         direction are drawn from Philox(seed, MixStream(StreamId(
//         "replica/ulp"), r)): word 0 and 1 give the index (64 bits, mod the
//         element count), word 2's lowest bit the direction (1: up).
//         Summers & Dinneen (ICML 2021), Jordan (ICLR 2024) App. D.
//         Keeps the trial's initial draw: its replicas measure the chaos
//         around that draw, which in short runs may not spread at all (the
//         verdict's spread guard, core/significance.h).
//   order another reduction order the framework legitimately uses on a CPU
//         of another vector width: lanesK profiles take the other widths of
//         {4, 8, 16} (ATen's Vectorized<float> on SSE/NEON, AVX2, AVX-512);
//         pairwise profiles take lanes8, lanes16, lanes4 (Eigen's packet
//         reductions on AVX2, AVX-512, SSE). Replica r takes alternative
//         (r - 1) mod n; once the n alternatives are used up (r > n) the
//         replica also carries the ulp nudge of replica r, so that no two
//         replicas repeat each other's bits. Sequential and Kahan orders
//         define their profile (`reference`): `order` is refused there.
// What defines a profile (Adam's eps placement, init distribution,
// batch-norm constants, padding, FMA, loss numerics) is never changed.
//
// Determinism: a replica's bits are a pure function of (profile, data,
// options, r, family); for exact-order profiles they are the same on every
// thread count and SIMD target (tests/trainers/replica_test.cc).
// Thread-safety: functions here are pure; TrainReplica as TrainProfile.
#ifndef XWIRES_TRAINERS_REPLICA_H_
#define XWIRES_TRAINERS_REPLICA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/reduce.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/trainers/model.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {

enum class PerturbFamily { kUlp, kSeed, kOrder };

// "ulp", "seed", "order"; InvalidArgument naming the value and the choices.
Result<PerturbFamily> ParsePerturbFamily(const std::string& name);
std::string PerturbFamilyName(PerturbFamily family);

// The reduction orders `order` replicas of `profile` cycle through (empty
// when the profile admits none).
std::vector<ReduceSpec> AlternativeOrders(const Profile& profile);

// OK when `family` can perturb `profile`; InvalidArgument for `order` on a
// profile whose reduction order admits no alternative, naming the profile.
Status CheckPerturbation(const Profile& profile, PerturbFamily family);

// The element an `ulp` nudge moved (UlpNudge::replica 0: none applied).
struct UlpNudge {
  uint64_t replica = 0;
  std::string tensor;      // state_dict name, e.g. "conv1.weight"
  int64_t index = -1;      // flat (row-major) index into the tensor
  int direction = 0;       // +1 towards +inf, -1 towards -inf
  float before = 0, after = 0;
};

// Applies replica r's nudge (r >= 1) to `model`'s first weight tensor,
// keyed by `seed`. FailedPrecondition if the model has no weight tensor.
Result<UlpNudge> ApplyUlpNudge(Model& model, uint64_t seed, uint64_t replica);

// What a replica changed, resolved for a given (profile, seed, r, family).
struct Perturbation {
  int64_t replica = 0;
  PerturbFamily family = PerturbFamily::kSeed;
  uint64_t train_seed = 0;  // the seed the replica trains with
  std::string reduce;       // the reduction order it trains with
  bool ulp = false;         // an ulp nudge keyed by (seed, r) is applied
  UlpNudge nudge;           // filled once trained, when `ulp`
  // {"family": "ulp", "tensor": "conv1.weight", "index": 17, "direction": 1,
  //  "before": f, "after": f} | {"family": "seed", "seed": s} |
  // {"family": "order", "reduce": "lanes16"[, ulp fields]}; replica 0:
  // {"family": "none"}. Compact JSON (no spaces).
  std::string ParamsJson() const;
};

// Resolves replica r of `family` for `profile` under options.seed;
// errors as CheckPerturbation (r >= 1) and InvalidArgument for r < 0.
Result<Perturbation> ResolvePerturbation(const Profile& profile, uint64_t seed,
                                         int64_t replica, PerturbFamily family);

struct ReplicaResult {
  Perturbation perturbation;
  TrainResult train;  // record (curves, weights), steps, diverged_step,
                      // test_predictions
};

// Trains replica `replica` of `family`: the profile (with the order's
// reduction when `order`) trained from `data` with `options` (seed replaced
// for `seed`, ulp nudge for `ulp`). `data` must be loaded with the trial's
// data seed. options.init_weights is honoured (the nudge then moves the
// loaded weights). Errors as TrainProfile and ResolvePerturbation.
Result<ReplicaResult> TrainReplica(const Profile& profile, const DataSplits& data,
                                   const TrainOptions& options, int64_t replica,
                                   PerturbFamily family);

// The stored row (dataset/store/replicas.h) of trained replica `r` of the
// model of `profile` in trial `trial_id`, perturbed by `family` (its stored
// name). Moves r's test predictions, and its weights when `keep_weights`,
// into the row.
ReplicaRecord ToReplicaRecord(int64_t trial_id, const std::string& profile,
                              const std::string& family, ReplicaResult& r,
                              bool keep_weights);

}  // namespace xw

#endif  // XWIRES_TRAINERS_REPLICA_H_
