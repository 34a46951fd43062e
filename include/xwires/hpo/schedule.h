// The two-stage schedule of a search for significant divergence
// (docs/significance.md, "The search"): every proposal is screened at K = 1
// (the pair trained once, as CrossedWires does); the top share of each round
// of proposals, by raw |acc_A - acc_B|, is replicated to K replicas a side and
// re-told to its GP with its lower confidence bound and SE^2; once screening
// ends, the final top pairs by LCB are confirmed with fresh replicas that took
// no part in the selection (ConfirmFirstReplica): both stages draw `seed`
// replicas by default, the selection replicas 0..K-1 (replica 0 = the
// screened trial), the confirmation replicas K..K+Kc-1. (`ulp` replicas of
// a short run barely move its predictions, so their spread is ~0 and their
// SE^2 misleads the GP; docs/significance.md.) Search-wide claims use
// Benjamini-Hochberg at fdr_q over the search's verdicts.
//
// The config object "schedule" of a search config (every key optional):
//   "schedule": {"kind": "auto", "round": 10, "top_share": 0.2,
//                "replicas": 5, "perturb": "seed", "confirm_top": 2,
//                "confirm_replicas": 4, "confirm_perturb": "seed",
//                "fdr_q": 0.1}
//
// Rounds. Proposals are numbered in the order the search made them (their
// pending rows' ids). Round j holds proposals j*round .. (j+1)*round - 1; it
// closes when every one of them has ended (finished or failed), or when
// screening ends (the budget is spent) for the last, partial round. Its
// finished trials are ranked by raw divergence (ties: earlier proposal) and
// the first SelectCount(finished, top_share) are replicated. The selection
// is thus a pure function of the stored trials: a resumed search selects
// exactly what the uninterrupted one did.
//
// Plain data and pure functions; thread-compatible.
#ifndef XWIRES_HPO_SCHEDULE_H_
#define XWIRES_HPO_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/hpo/search_config.h"

namespace xw::hpo {

enum class ScheduleKind {
  kAuto,      // "auto": two_stage with objective significant_diff, else screen
  kScreen,    // "screen": every proposal at K = 1, nothing replicated
  kTwoStage,  // "two_stage": needs objective significant_diff
};
std::string ScheduleKindName(ScheduleKind k);

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::kAuto;
  int round = 10;           // proposals per selection round (>= 1)
  double top_share = 0.2;   // share of a round replicated, in (0, 1]
  int replicas = 5;         // K per profile, replica 0 included; 4..32
  std::string perturb = "seed";  // family of the selection replicas
  int confirm_top = 2;      // final top pairs confirmed (0: none)
  int confirm_replicas = 4;     // fresh replicas a side; 4..32
  std::string confirm_perturb = "seed";  // family of the confirmation (any)
  double fdr_q = 0.10;      // Benjamini-Hochberg level, in (0, 1)
  bool operator==(const ScheduleOptions&) const = default;
};

// Checks every field: InvalidArgument naming it as the config does
// ("schedule.replicas: ...") and saying why (K < 4: an exact permutation
// test cannot reach p < 0.05 below 4 replicas a side).
Status ValidateSchedule(const ScheduleOptions& s, Objective objective);
// The first replica of a confirmation, which counts replicas
// ConfirmFirstReplica .. ConfirmFirstReplica + confirm_replicas - 1 of
// confirm_perturb: `replicas` (K) when confirm_perturb == perturb, so that
// it starts past the selection's replicas 0..K-1; else 1 (replica 0 of any
// family is the screened trial, which took part in the selection).
int64_t ConfirmFirstReplica(const ScheduleOptions& s);

// Whether the schedule replicates (kind two_stage, or auto with
// significant_diff).
bool IsTwoStage(const ScheduleOptions& s, Objective objective);

// Replicated trials in a round of `finished` trials: round-half-up of
// share x finished, at least 1 and at most finished (0 when none finished).
int SelectCount(int finished, double share);

// One proposal of a search as the schedule sees it.
struct Proposal {
  int64_t order = 0;     // proposal number (the pending row's id)
  int64_t trial_id = 0;  // the finished trial (0: not finished)
  bool ended = false;    // finished or failed
  double divergence = 0;  // raw |acc_A - acc_B| when finished
};

// The trials to replicate: the top SelectCount of every closed round
// (`proposals` in any order; the last round closes when screening_ended),
// as trial ids in round order, best first within a round.
std::vector<int64_t> SelectForReplication(std::vector<Proposal> proposals,
                                          const ScheduleOptions& s,
                                          bool screening_ended);

// A replicated trial and its selection statistics.
struct Replicated {
  int64_t trial_id = 0;
  double lcb = 0;
  double p_value = 1;
};
// The `top` best by LCB (ties: the lower p, then the lower trial id).
std::vector<int64_t> SelectForConfirmation(std::vector<Replicated> r,
                                           int top);

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SCHEDULE_H_
