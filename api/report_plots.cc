// Report sections over the whole trial set: accuracy and divergence
// densities, hyperparameter scatter plots, mutual-information bars.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report_internal.h"
#include "xwires/api/kde.h"
#include "xwires/api/mi_analysis.h"
#include "xwires/api/svg_plot.h"

namespace xw::report {
namespace {

struct Sample {
  std::string name;
  std::vector<double> values;
};

// One density line per sample set on a shared grid spanning every set's
// values +- 3 bandwidths within the quantity's bounds [lo_clip, hi_clip],
// reflected at those bounds (ReflectedKde) so that the curves neither lose
// mass nor sink at 0 and 1. Sets with fewer than two distinct values get no
// line.
std::vector<LineSeries> Densities(const std::vector<Sample>& sets, int points,
                                  double lo_clip, double hi_clip) {
  double lo = INFINITY, hi = -INFINITY, h_max = 0;
  std::vector<double> hs;
  for (const Sample& s : sets) {
    const double h = ScottBandwidth(s.values);
    hs.push_back(h);
    if (!(h > 0)) continue;
    h_max = std::max(h_max, h);
    for (double v : s.values) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  std::vector<LineSeries> out;
  if (!(h_max > 0)) return out;
  const std::vector<double> grid =
      Linspace(std::max(lo_clip, lo - 3 * h_max),
               std::min(hi_clip, hi + 3 * h_max), points);
  for (size_t i = 0; i < sets.size(); ++i) {
    if (!(hs[i] > 0)) continue;
    int64_t n = 0;
    for (double v : sets[i].values) n += std::isfinite(v);
    LineSeries line;
    line.name = sets[i].name + " (n=" + std::to_string(n) + ")";
    line.x = grid;
    line.y = ReflectedKde(sets[i].values, grid, hs[i], lo_clip, hi_clip);
    out.push_back(std::move(line));
  }
  return out;
}

// Log scale for the hyperparameters our searches draw log-uniformly, when
// the values are spread in log space: the middle half spans at least a
// decade (uniform draws such as the CrossedWires study's do not).
bool UseLog(const std::string& var, const std::vector<double>& v) {
  if (var != "lr" && var != "adam_eps" && var != "weight_decay") return false;
  std::vector<double> pos;
  for (double d : v) {
    if (!std::isfinite(d)) continue;
    if (d <= 0) return false;
    pos.push_back(d);
  }
  if (pos.size() < 4) return false;
  std::sort(pos.begin(), pos.end());
  return pos[pos.size() * 3 / 4] / pos[pos.size() / 4] >= 10;
}

}  // namespace

void DistributionSection(Context& c) {
  c.Heading("dist", "Distributions");
  c.Para(
      "Gaussian kernel density estimates (Scott's bandwidth) of each profile's "
      "final test accuracy per architecture, and of the divergence of each "
      "architecture. Both quantities lie in [0, 1]: the kernels are reflected "
      "at 0 and 1, so a density does not fall off at a bound where the trials "
      "crowd (models at chance, pairs that agree). Each profile keeps its "
      "colour in every report.");
  std::vector<Sample> divergence;
  for (const auto& [arch, trials] : c.by_arch) {
    std::map<std::string, Sample> by_profile;
    Sample div{arch, {}};
    for (const TrialRow* t : trials) {
      div.values.push_back(t->divergence);
      for (const ModelRow& m : t->models) {
        by_profile[m.profile].name = m.profile;
        by_profile[m.profile].values.push_back(m.test_acc);
      }
    }
    divergence.push_back(std::move(div));
    std::vector<Sample> sets;
    for (auto& [p, s] : by_profile) sets.push_back(std::move(s));
    auto lines = Densities(sets, c.opt.kde_points, 0.0, 1.0);
    if (lines.empty()) continue;
    for (LineSeries& l : lines)
      l.color = c.profile_colors[l.name.substr(0, l.name.find(" (n="))];
    const std::string id = PlotId({"kde", "acc", arch});
    c.AddPlot(id, LinePlotSvg(id, arch + ": test accuracy density",
                              {"test accuracy"}, {"density"}, lines));
  }
  auto lines = Densities(divergence, c.opt.kde_points, 0.0, 1.0);
  if (!lines.empty()) {
    const std::string id = PlotId({"kde", "divergence"});
    c.AddPlot(id,
              LinePlotSvg(id, "Divergence density per architecture",
                          {"divergence |acc A - acc B|"}, {"density"}, lines));
  }
}

void ScatterSection(Context& c) {
  c.Heading("space", "Hyperparameter space");
  c.Para(
      "Each trial at its hyperparameters, coloured by divergence (yellow: most "
      "divergent, "
      "drawn on top). Pairs of the hyperparameters that vary within an "
      "architecture.");
  for (const auto& [arch, trials] : c.by_arch) {
    std::vector<std::string> vars;
    for (const std::string& v : MiVariableNames()) {
      std::set<double> seen;
      for (const TrialRow* t : trials) {
        const double d = TrialVariable(*t, v);
        if (std::isfinite(d)) seen.insert(d);
      }
      if (seen.size() > 1) vars.push_back(v);
    }
    std::vector<double> div;
    for (const TrialRow* t : trials) div.push_back(t->divergence);
    for (size_t i = 0; i < vars.size(); ++i) {
      for (size_t j = i + 1; j < vars.size(); ++j) {
        std::vector<double> xs, ys;
        for (const TrialRow* t : trials) {
          xs.push_back(TrialVariable(*t, vars[i]));
          ys.push_back(TrialVariable(*t, vars[j]));
        }
        const std::string id = PlotId({"scatter", arch, vars[i], vars[j]});
        c.AddPlot(id,
                  ScatterPlotSvg(id, arch + ": " + vars[j] + " vs " + vars[i],
                                 {vars[i], UseLog(vars[i], xs)},
                                 {vars[j], UseLog(vars[j], ys)}, xs, ys, div,
                                 "divergence"));
      }
    }
    if (vars.size() < 2)
      c.Para(arch +
             ": fewer than two varying hyperparameters; no scatter plot.");
  }
}

Status MiSection(Context& c) {
  c.Heading("mi", "Mutual information");
  const MiOptions& mi = c.opt.mi;
  MiAnalysisOptions o;
  o.archs = c.opt.archs;
  o.where = c.opt.where;
  o.mi = mi;
  c.Para(std::string("Mutual information (nats) between each hyperparameter, "
                     "and each pair, and the divergence: ") +
         (mi.estimator == MiEstimator::kKsg
              ? "KSG k-nearest-neighbour estimate"
              : "values normalised to [0, 1] and digitized in 0.1 bins") +
         ", " + std::to_string(mi.repeats) +
         " repeats with uniform jitter of " + Fmt(mi.jitter, "%g") +
         "; bars show the mean, whiskers one standard deviation, the black "
         "tick the permutation null (the mean MI of " +
         std::to_string(mi.shuffles) +
         " shufflings of the divergences: what the estimator reports for no "
         "information at this n). Pairs have 10 times as many bins, hence a "
         "larger null, and are drawn on their own axis.");
  c.Para(MiCaption(o));
  auto rows = ComputeDatasetMi(c.ds, o);
  if (!rows.ok()) {
    if (rows.status().code() == Status::Code::kNotFound) {
      c.Para("No trial with a known divergence: no mutual information.");
      return Status::OK();
    }
    return rows.status();
  }
  std::map<std::string, std::vector<const MiRow*>> groups;
  std::vector<std::string> order;
  for (const MiRow& r : *rows) {
    if (!groups.count(r.group)) order.push_back(r.group);
    groups[r.group].push_back(&r);
  }
  for (const std::string& w : MiWarnings(*rows)) c.Para("Warning: " + w + ".");
  for (const std::string& g : order) {
    for (const bool pairs : {false, true}) {
      std::vector<std::string> labels;
      std::vector<double> values, errors, nulls;
      for (const MiRow* r : groups[g]) {
        if ((r->variable.find('+') != std::string::npos) != pairs) continue;
        labels.push_back(r->variable + (r->scale.find("log") != std::string::npos
                                            ? " (" + r->scale + ")"
                                            : ""));
        values.push_back(r->estimate.mean);
        errors.push_back(r->estimate.std);
        nulls.push_back(r->estimate.null_mean);
      }
      if (labels.empty()) continue;
      const std::string id = pairs ? PlotId({"mi", g, "pairs"}) : PlotId({"mi", g});
      c.AddPlot(id, BarPlotSvg(id,
                               g + ": MI of " + (pairs ? "pairs" : "single variables") +
                                   " with divergence (n=" +
                                   std::to_string(groups[g].front()->estimate.n) + ")",
                               labels, values, errors, "MI (nats); tick: permutation null",
                               nulls));
    }
  }
  c.html += "<details><summary>MI table</summary><div data-table=\"mi\">" +
            HtmlTable(MiTable(*rows)) + "</div></details>\n";
  return Status::OK();
}

}  // namespace xw::report
