// Report section about replicas (docs/significance.md): for each replicated
// profile pair of the report's trials, every replica's test accuracy, each
// profile's mean with its 95% confidence interval, and the pair's verdict.
#include <algorithm>
#include <cmath>
#include <map>

#include "report_internal.h"
#include "xwires/api/svg_plot.h"
#include "xwires/core/significance.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::report {

namespace {

// At most this many pairs are drawn (the largest |mean difference| first);
// the table lists every one.
constexpr size_t kMaxReplicaPlots = 24;

// 95% CI half-width of a mean of k values with sample sd `sd`.
double MeanHalfWidth(double sd, int k) {
  if (k < 2 || !std::isfinite(sd)) return NAN;
  return stats::StudentQuantile(k - 1, 0.975) * sd / std::sqrt(double(k));
}

std::string PairTitle(const ReplicaStatsRecord& s) {
  return "trial " + std::to_string(s.trial_id) + " (" + s.family + "): " +
         stats::VerdictName(s.stats.verdict) + ", p = " +
         Fmt(s.stats.permutation_p, "%.3g") + ", diff = " +
         Fmt(s.stats.mean_diff, "%.3f");
}

// Replica accuracies of one profile at x = position +- a small offset per
// replica (so equal accuracies stay visible), and the mean +- CI beside them.
void AddProfile(const std::vector<ReplicaRecord>& reps, const std::string& family,
                const std::string& profile, const stats::ProfileSummary& sum,
                double position, std::vector<LineSeries>& out) {
  LineSeries dots{profile + " replicas", {}, {}, false, ProfileColor(profile), true};
  std::vector<const ReplicaRecord*> mine;
  for (const ReplicaRecord& r : reps) {
    if (r.profile == profile && r.family == family) mine.push_back(&r);
  }
  const size_t n = mine.size();
  for (size_t i = 0; i < n; ++i) {
    dots.x.push_back(n > 1 ? position - 0.12 + 0.24 * i / double(n - 1) : position);
    dots.y.push_back(mine[i]->test_acc);
  }
  LineSeries mean{profile + " mean, 95% CI", {position + 0.22}, {sum.mean}, false,
                  ProfileColor(profile), true};
  mean.err = {MeanHalfWidth(sum.sd, sum.k)};
  out.push_back(std::move(dots));
  out.push_back(std::move(mean));
}

}  // namespace

Status ReplicasSection(Context& c) {
  c.Heading("replicas", "Replicas and verdicts");
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> all, LoadReplicaStats(c.ds));
  std::map<int64_t, const TrialRow*> in_report;
  for (const TrialRow& t : c.trials) in_report[t.id] = &t;
  std::vector<const ReplicaStatsRecord*> pairs;
  for (const ReplicaStatsRecord& s : all) {
    if (in_report.count(s.trial_id)) pairs.push_back(&s);
  }
  if (pairs.empty()) {
    c.Para("No trial of the report has replicas (`xwires replicate`).");
    return Status::OK();
  }
  c.Para(
      "Each replicated pair: every replica's test accuracy (dots), each "
      "profile's mean with the 95% confidence interval of the mean "
      "(t quantile x sd / sqrt(K)), and the verdict of the exact permutation "
      "test with its p-value (docs/significance.md). Up to " +
      std::to_string(kMaxReplicaPlots) +
      " pairs are drawn, the largest |mean difference| first; the table lists "
      "all.");
  Table t;
  t.columns = {"trial", "profile_a", "profile_b", "family", "k_a", "k_b",
               "mean_a", "sd_a", "mean_b", "sd_b", "mean_diff", "p_value",
               "diff_lcb", "noise_sd", "verdict"};
  for (const ReplicaStatsRecord* s : pairs) {
    t.rows.push_back({s->trial_id, s->profile_a, s->profile_b, s->family, s->k_a,
                      s->k_b, s->stats.a.mean, s->stats.a.sd, s->stats.b.mean,
                      s->stats.b.sd, s->stats.mean_diff, s->stats.permutation_p,
                      s->stats.lcb, s->NoiseSd(),
                      std::string(stats::VerdictName(s->stats.verdict))});
  }
  c.html += "<div class=\"scroll\" data-table=\"replicas\">" + HtmlTable(t) + "</div>";
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const ReplicaStatsRecord* a, const ReplicaStatsRecord* b) {
                     return std::fabs(a->stats.mean_diff) > std::fabs(b->stats.mean_diff);
                   });
  if (pairs.size() > kMaxReplicaPlots) pairs.resize(kMaxReplicaPlots);
  for (const ReplicaStatsRecord* s : pairs) {
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> reps,
                        LoadReplicas(c.ds, s->trial_id, s->family));
    std::vector<LineSeries> series;
    AddProfile(reps, s->family, s->profile_a, s->stats.a, 1, series);
    AddProfile(reps, s->family, s->profile_b, s->stats.b, 2, series);
    Axis x{"profile"};
    x.categories = {s->profile_a, s->profile_b};
    const std::string id = PlotId({"replicas", std::to_string(s->trial_id), s->profile_a,
                                   s->profile_b, s->family});
    c.AddPlot(id, LinePlotSvg(id, PairTitle(*s), x, {"test accuracy"}, series));
  }
  return Status::OK();
}

}  // namespace xw::report
