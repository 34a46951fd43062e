// Report sections about single trials: training curves of the most
// divergent pairs and the stored compare / attribute results.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "report_internal.h"
#include "xwires/api/svg_plot.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::report {
namespace {

using Json = nlohmann::json;

bool WideRange(const std::vector<LineSeries>& series) {
  double lo = INFINITY, hi = 0;
  for (const LineSeries& s : series) {
    for (double v : s.y) {
      if (!std::isfinite(v)) continue;
      if (v <= 0) return false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return hi / lo >= 100;
}

std::string TrialTitle(const TrialRow& t) {
  return t.arch + " #" + std::to_string(t.id) +
         (t.external_id.empty() ? "" : " " + t.external_id) + ", div " +
         Fmt(t.divergence, "%.3f");
}

double JNum(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

std::string JStr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

void CompareResult(Context& c, const AnalysisRecord& r, const Json& j) {
  Table t;
  t.columns = {"tier", "verdict", "detail"};
  for (const char* tier : {"tier1", "tier2", "tier3"}) {
    if (!j.contains(tier)) continue;
    t.rows.push_back(
        {std::string(tier), JStr(j[tier], "verdict"), JStr(j[tier], "detail")});
  }
  c.html += HtmlTable(t);
  if (!j.contains("tier2") || !j["tier2"].contains("layers")) return;
  LineSeries rel{"relative L2", {}, {}, false, ""};
  LineSeries cos{"1 - cosine", {}, {}, true, ""};
  double k = 0;
  for (const Json& l : j["tier2"]["layers"]) {
    ++k;
    rel.x.push_back(k);
    cos.x.push_back(k);
    rel.y.push_back(JNum(l["stats"], "rel_l2"));
    cos.y.push_back(1 - JNum(l["stats"], "cosine"));
  }
  const std::string id = PlotId({"compare", std::to_string(r.id), "layers"});
  c.AddPlot(id, LinePlotSvg(id,
                            "trial " + std::to_string(r.trial_ids.at(0)) +
                                ": activation differences by module",
                            {"module (forward order)"}, {"difference", true},
                            {rel, cos}));
}

void AttributeResult(Context& c, const AnalysisRecord& r, const Json& j) {
  Table t;
  t.columns = {
      "knob", "A value", "B value", "alone from A", "remains (only k differs)",
      "share"};
  std::vector<std::string> labels;
  std::vector<double> shares;
  for (const Json& k : j.value("knobs", Json::array())) {
    t.rows.push_back({JStr(k, "knob"), k.value("a_value", Json()).dump(),
                      k.value("b_value", Json()).dump(), JNum(k, "alone_a"),
                      JNum(k, "remain_b"), JNum(k, "share")});
    labels.push_back(JStr(k, "knob"));
    shares.push_back(JNum(k, "share"));
  }
  c.html += HtmlTable(t);
  if (labels.empty()) return;
  const std::string id = PlotId({"attribute", std::to_string(r.id), "shares"});
  c.AddPlot(id,
            BarPlotSvg(id,
                       "trial " + std::to_string(r.trial_ids.at(0)) +
                           ": share of the divergence per knob",
                       labels, shares, {}, "share of divergence (1 = all)"));
}

}  // namespace

Status CurvesSection(Context& c) {
  c.Heading("curves", "Training curves of the most divergent pairs");
  c.Para(
      "Per-epoch training loss (and test accuracy where recorded) of both "
      "models of the " +
      std::to_string(c.opt.top_k) +
      " most divergent trials of each architecture.");
  for (const auto& [arch, trials] : c.by_arch) {
    std::vector<const TrialRow*> ranked;
    for (const TrialRow* t : trials) {
      if (std::isfinite(t->divergence)) ranked.push_back(t);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const TrialRow* a, const TrialRow* b) {
                       return a->divergence > b->divergence;
                     });
    if (ranked.size() > static_cast<size_t>(c.opt.top_k))
      ranked.resize(c.opt.top_k);
    for (const TrialRow* t : ranked) {
      std::vector<LineSeries> loss, acc;
      for (const ModelRow& m : t->models) {
        if (m.n_epochs == 0) continue;
        XW_ASSIGN_OR_RETURN(std::vector<EpochMetrics> curve,
                            c.ds.LoadCurves(m.id));
        LineSeries l{m.profile, {}, {}, false, c.profile_colors[m.profile]};
        LineSeries a{m.profile, {}, {}, false, c.profile_colors[m.profile]};
        bool any_mean = false, any_acc = false;
        for (const EpochMetrics& e : curve)
          any_mean |= std::isfinite(e.train_loss_mean);
        for (const EpochMetrics& e : curve) {
          l.x.push_back(e.epoch);
          l.y.push_back(any_mean ? e.train_loss_mean : e.train_loss_last);
          a.x.push_back(e.epoch);
          a.y.push_back(e.test_acc);
          any_acc |= std::isfinite(e.test_acc);
        }
        loss.push_back(std::move(l));
        if (any_acc) acc.push_back(std::move(a));
      }
      if (loss.empty()) continue;
      const std::string id = PlotId({"curves", std::to_string(t->id), "loss"});
      c.AddPlot(id, LinePlotSvg(id, TrialTitle(*t) + ": loss", {"epoch"},
                                {"training loss", WideRange(loss)}, loss));
      if (!acc.empty()) {
        const std::string aid =
            PlotId({"curves", std::to_string(t->id), "acc"});
        c.AddPlot(aid, LinePlotSvg(aid, TrialTitle(*t) + ": test acc",
                                   {"epoch"}, {"test accuracy"}, acc));
      }
    }
  }
  return Status::OK();
}

Status AnalysesSection(Context& c) {
  c.Heading("analyses", "Stored compare and attribute results");
  XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> results,
                      LoadAnalyses(c.ds));
  std::set<int64_t> ids;
  for (const TrialRow& t : c.trials) ids.insert(t.id);
  int shown = 0;
  for (const AnalysisRecord& r : results) {
    // mi results describe many trials; the report computes its own MI.
    if (r.kind == "mi" || !ids.count(r.trial_ids.at(0))) continue;
    const Json j =
        Json::parse(r.result_json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    ++shown;
    c.html += "<h3>" + XmlEscape(r.kind) + " of trial " +
              std::to_string(r.trial_ids.at(0)) + " (" +
              XmlEscape(j.value("profiles", Json::array()).dump()) + ", " +
              XmlEscape(r.created_at) + ")</h3>\n";
    c.Para(r.summary);
    if (r.kind == "compare") CompareResult(c, r, j);
    if (r.kind == "attribute") AttributeResult(c, r, j);
  }
  if (shown == 0) {
    c.Para(
        "None stored. Run `xwires compare DATASET TRIAL --store` or `xwires "
        "attribute DATASET TRIAL`.");
  }
  return Status::OK();
}

}  // namespace xw::report
