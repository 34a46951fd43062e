// Report section about searches: how each search's best objective grew with
// its trials (the convergence plot of an optimiser).
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "report_internal.h"
#include "xwires/api/svg_plot.h"

namespace xw::report {
namespace {

// A finished trial's place in its search's finishing order: the search
// records it (extra_json.search.finished); rows written before it did were
// created when they finished, so their ids order them, before any that
// records one.
std::pair<int64_t, int64_t> FinishKey(const TrialRow& t) {
  const auto j = nlohmann::json::parse(t.extra_json, nullptr, false);
  if (j.is_object() && j.contains("search") && j["search"].is_object() &&
      j["search"].contains("finished") && j["search"]["finished"].is_number_integer()) {
    return {j["search"]["finished"].get<int64_t>(), t.id};
  }
  return {-1, t.id};
}

}  // namespace

Status SearchesSection(Context& c) {
  c.Heading("searches", "Searches: best so far");
  std::map<int64_t, std::vector<const TrialRow*>> by_search;
  for (const TrialRow& t : c.trials) {
    if (t.search_id && std::isfinite(t.divergence)) by_search[*t.search_id].push_back(&t);
  }
  if (by_search.empty()) {
    c.Para("No trial of the report comes from a search (`xwires search`).");
    return Status::OK();
  }
  c.Para(
      "Each search's finished trials in the order they finished (dots: the "
      "trial's objective) and the best objective so far (line): where the "
      "line flattens, more trials of that search found nothing larger.");
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, c.ds.Searches());
  std::map<int64_t, std::string> objective;
  for (const SearchRow& s : searches) objective[s.id] = s.record.objective;
  for (auto& [id, trials] : by_search) {
    std::sort(trials.begin(), trials.end(), [](const TrialRow* a, const TrialRow* b) {
      return FinishKey(*a) < FinishKey(*b);
    });
    LineSeries each{"trial", {}, {}, false, "#7f7f7f", true};
    LineSeries best{"best so far", {}, {}, false, "#222222", false};
    double top = -INFINITY;
    for (size_t i = 0; i < trials.size(); ++i) {
      const double x = static_cast<double>(i + 1);
      top = std::max(top, trials[i]->divergence);
      each.x.push_back(x);
      each.y.push_back(trials[i]->divergence);
      best.x.push_back(x);
      best.y.push_back(top);
    }
    const std::string name = objective.count(id) && !objective[id].empty()
                                 ? objective[id]
                                 : std::string("objective");
    const std::string plot = PlotId({"best", "search", std::to_string(id)});
    c.AddPlot(plot, LinePlotSvg(plot,
                                "search " + std::to_string(id) + ": best so far (" +
                                    std::to_string(trials.size()) + " trials)",
                                {"trial (finishing order)"}, {name}, {each, best}));
  }
  return Status::OK();
}

}  // namespace xw::report
