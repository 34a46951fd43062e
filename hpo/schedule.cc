// The two-stage schedule's options and selection rules (schedule.h).
#include "xwires/hpo/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "xwires/trainers/replica.h"

namespace xw::hpo {
namespace {

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("search config: schedule." + field + ": " + what);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status CheckReplicas(const std::string& field, int k) {
  if (k < 4) {
    return Bad(field, std::to_string(k) +
                          " is too few; at least 4 replicas a side are needed, because "
                          "below 4 an exact permutation test cannot reach p < 0.05 (with "
                          "3 + 3 the smallest p is 2/20 = 0.1)");
  }
  if (k > 32) return Bad(field, "at most 32 (the exact test enumerates splits)");
  return Status::OK();
}

}  // namespace

std::string ScheduleKindName(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::kAuto:
      return "auto";
    case ScheduleKind::kScreen:
      return "screen";
    case ScheduleKind::kTwoStage:
      return "two_stage";
  }
  return "?";
}

int64_t ConfirmFirstReplica(const ScheduleOptions& s) {
  return s.confirm_perturb == s.perturb ? s.replicas : 1;
}

bool IsTwoStage(const ScheduleOptions& s, Objective objective) {
  return s.kind == ScheduleKind::kTwoStage ||
         (s.kind == ScheduleKind::kAuto && objective == Objective::kSignificantDiff);
}

Status ValidateSchedule(const ScheduleOptions& s, Objective objective) {
  if (s.kind == ScheduleKind::kTwoStage && objective != Objective::kSignificantDiff) {
    return Bad("kind", "two_stage needs the objective significant_diff (got " +
                           ObjectiveName(objective) + ")");
  }
  if (s.round < 1) return Bad("round", "must be >= 1, got " + std::to_string(s.round));
  if (!(s.top_share > 0 && s.top_share <= 1)) {
    return Bad("top_share", "must be in (0, 1], got " + Num(s.top_share));
  }
  XW_RETURN_IF_ERROR(CheckReplicas("replicas", s.replicas));
  XW_RETURN_IF_ERROR(CheckReplicas("confirm_replicas", s.confirm_replicas));
  auto f = ParsePerturbFamily(s.perturb);
  if (!f.ok()) return Bad("perturb", f.status().message());
  auto g = ParsePerturbFamily(s.confirm_perturb);
  if (!g.ok()) return Bad("confirm_perturb", g.status().message());
  if (s.confirm_top < 0) return Bad("confirm_top", "must be >= 0");
  if (!(s.fdr_q > 0 && s.fdr_q < 1)) {
    return Bad("fdr_q", "must be in (0, 1), got " + Num(s.fdr_q));
  }
  return Status::OK();
}

int SelectCount(int finished, double share) {
  if (finished <= 0) return 0;
  const int n = static_cast<int>(std::floor(share * finished + 0.5));
  return std::clamp(n, 1, finished);
}

std::vector<int64_t> SelectForReplication(std::vector<Proposal> proposals,
                                          const ScheduleOptions& s,
                                          bool screening_ended) {
  std::sort(proposals.begin(), proposals.end(),
            [](const Proposal& a, const Proposal& b) { return a.order < b.order; });
  std::vector<int64_t> out;
  for (size_t start = 0; start < proposals.size(); start += s.round) {
    const size_t end = std::min(proposals.size(), start + s.round);
    const bool full = end - start == static_cast<size_t>(s.round);
    bool closed = full || screening_ended;
    std::vector<Proposal> done;
    for (size_t i = start; i < end; ++i) {
      closed &= proposals[i].ended;
      if (proposals[i].trial_id > 0) done.push_back(proposals[i]);
    }
    if (!closed) continue;
    std::stable_sort(done.begin(), done.end(), [](const Proposal& a, const Proposal& b) {
      return a.divergence > b.divergence;
    });
    const int n = SelectCount(static_cast<int>(done.size()), s.top_share);
    for (int i = 0; i < n; ++i) out.push_back(done[i].trial_id);
  }
  return out;
}

std::vector<int64_t> SelectForConfirmation(std::vector<Replicated> r, int top) {
  std::sort(r.begin(), r.end(), [](const Replicated& a, const Replicated& b) {
    if (a.lcb != b.lcb) return a.lcb > b.lcb;
    if (a.p_value != b.p_value) return a.p_value < b.p_value;
    return a.trial_id < b.trial_id;
  });
  std::vector<int64_t> out;
  for (int i = 0; i < top && i < static_cast<int>(r.size()); ++i) out.push_back(r[i].trial_id);
  return out;
}

}  // namespace xw::hpo
