// The report page: options, the trial set, the page skeleton and the
// statistics section; plots live in report_plots.cc and report_runs.cc.
#include <cmath>
#include <cstdio>
#include <set>
#include <variant>

#include "report_internal.h"
#include "xwires/api/svg_plot.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"
#include "xwires/core/significance.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw {
namespace report {

void Context::AddPlot(const std::string& id, const std::string& svg) {
  html += "<figure>" + svg + "</figure>\n";
  plot_ids.push_back(id);
}

void Context::Heading(const std::string& anchor, const std::string& text) {
  html += "<h2 id=\"" + anchor + "\">" + XmlEscape(text) + "</h2>\n";
}

void Context::Para(const std::string& text) {
  html += "<p>" + XmlEscape(text) + "</p>\n";
}

std::string PlotId(const std::vector<std::string>& parts) {
  std::string id;
  for (const std::string& p : parts) {
    if (!id.empty()) id += '-';
    for (char ch : p) {
      const char c =
          static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
  }
  return id;
}

std::string Fmt(double v, const char* format) {
  if (!std::isfinite(v)) return "&ndash;";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string HtmlTable(const Table& t) {
  std::string s = "<table><thead><tr>";
  for (const std::string& c : t.columns) s += "<th>" + XmlEscape(c) + "</th>";
  s += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const Cell& cell : row) {
      if (const auto* d = std::get_if<double>(&cell)) {
        s += "<td class=\"num\">" + Fmt(*d) + "</td>";
      } else if (const auto* i = std::get_if<int64_t>(&cell)) {
        s += "<td class=\"num\">" + std::to_string(*i) + "</td>";
      } else if (const auto* str = std::get_if<std::string>(&cell)) {
        s += "<td>" + XmlEscape(*str) + "</td>";
      } else {
        s += "<td>&ndash;</td>";
      }
    }
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

// Per architecture: trials with a collapsed model, with a model at chance,
// and with either (degenerate.h).
void DegenerateTable(Context& c) {
  Table t;
  t.columns = {"arch", "trials", "collapsed", "at_chance", "degenerate"};
  int64_t total[4] = {0, 0, 0, 0};
  auto add = [&](const std::string& name, const int64_t n[4]) {
    t.rows.push_back({name, n[0], n[1], n[2], n[3]});
  };
  for (const auto& [arch, trials] : c.by_arch) {
    int64_t n[4] = {static_cast<int64_t>(trials.size()), 0, 0, 0};
    for (const TrialRow* r : trials) {
      const ModelFlags f = TrialFlags(DegenerateFlags(*r));
      n[1] += f.collapsed == 1;
      n[2] += f.at_chance == 1;
      n[3] += f.collapsed == 1 || f.at_chance == 1;
    }
    add(arch, n);
    for (int i = 0; i < 4; ++i) total[i] += n[i];
  }
  if (c.by_arch.size() > 1) add("all", total);
  c.Para(
      "Degenerate models: a model is collapsed when a recorded loss was "
      "non-finite or above " + std::string(Fmt(stats::kExplodingLossMultiple, "%g")) +
      " ln(k), and at chance when its test accuracy is "
      "within 3 binomial standard errors of 1/k (docs/analysis.md). " +
      std::string(c.opt.exclude_degenerate
                      ? "Trials with either are left out of the tables below."
                      : "The tables below include them (report "
                        "--exclude-degenerate leaves them out)."));
  c.html += "<div class=\"scroll\" data-table=\"degenerate\">" +
            HtmlTable(t) + "</div>";
}

Status StatsSection(Context& c) {
  c.Heading("stats", "Divergence statistics");
  c.Para(
      "Per architecture: divergence (|difference of test accuracies|) minimum, "
      "maximum, "
      "median and mean, the share of trials diverging by at least " +
      std::string(Fmt(c.opt.threshold, "%g")) +
      ", and each profile's test-accuracy range (the CrossedWires study's "
      "Tables 2 and 3).");
  DegenerateTable(c);
  StatsOptions so;
  so.threshold = c.opt.threshold;
  so.filter.where = c.opt.where;
  so.filter.archs = c.opt.archs;
  so.filter.exclude_degenerate = c.opt.exclude_degenerate;
  XW_ASSIGN_OR_RETURN(auto stats, ComputeStats(c.ds, so));
  c.html += "<div class=\"scroll\" data-table=\"stats\">" +
            HtmlTable(StatsTable(stats, so)) + "</div>";
  TopOptions to;
  to.k = std::max(c.opt.top_k, 1);
  to.filter = so.filter;
  XW_ASSIGN_OR_RETURN(auto top, TopTrials(c.ds, to));
  c.html +=
      "<h3>Most divergent trials per architecture</h3>\n<div class=\"scroll\" "
      "data-table=\"top\">" +
      HtmlTable(TopTable(top)) + "</div>";
  return Status::OK();
}

namespace {

constexpr const char* kStyle = R"css(
body{font-family:sans-serif;margin:24px auto;max-width:1200px;color:#222;line-height:1.4}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:15px}table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px}th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{display:inline-block;margin:6px;vertical-align:top;border:1px solid #eee}
.scroll{overflow-x:auto}.meta{color:#666;font-size:12px}nav a{margin-right:12px}
.verdict-identical{color:#2a7}.verdict-close{color:#c80}.verdict-differ{color:#c22}
)css";

Status CheckOptions(const ReportOptions& o) {
  if (o.top_k < 0) return Status::InvalidArgument("--top must be >= 0");
  if (o.kde_points < 2)
    return Status::InvalidArgument("kde_points must be >= 2");
  if (!(o.threshold >= 0))
    return Status::InvalidArgument("--threshold must be >= 0");
  if (o.mi.repeats < 1)
    return Status::InvalidArgument("--mi-repeats must be >= 1");
  if (o.mi.shuffles < 0)
    return Status::InvalidArgument("--mi-shuffles must be >= 0");
  return Status::OK();
}

}  // namespace
}  // namespace report

Result<Report> BuildReport(const Dataset& ds, const ReportOptions& opt) {
  using report::Context;
  XW_RETURN_IF_ERROR(report::CheckOptions(opt));
  TrialQuery q;
  q.where = opt.where;
  q.archs = opt.archs;
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> trials, ds.Query(q));
  if (trials.empty())
    return Status::NotFound(ds.dir() +
                            ": no trial matches the report's filter");
  Context c{ds, opt, std::move(trials), {}, {}, {}, {}};
  std::set<std::string> profiles;
  for (const TrialRow& t : c.trials) {
    c.by_arch[t.arch].push_back(&t);
    for (const ModelRow& m : t.models) profiles.insert(m.profile);
  }
  std::string names;
  for (const std::string& p : profiles) {
    names += (names.empty() ? "" : ", ") + p;
    c.profile_colors[p] = ProfileColor(p);
  }
  c.html += "<h1>" + XmlEscape(opt.title) +
            "</h1>\n<p class=\"meta\">dataset " + XmlEscape(ds.dir()) +
            " &middot; " + std::to_string(c.trials.size()) + " trials, " +
            std::to_string(c.by_arch.size()) + " architectures, profiles " +
            XmlEscape(names) + " &middot; generated " + UtcNow("%Y-%m-%d %H:%M UTC") +
            " by xwires " + XmlEscape(GetBuildInfo().toolkit_version) +
            "</p>\n";
  c.html +=
      "<nav><a href=\"#stats\">Statistics</a><a "
      "href=\"#dist\">Distributions</a>"
      "<a href=\"#searches\">Searches</a><a href=\"#replicas\">Replicas</a>"
      "<a href=\"#space\">Hyperparameter space</a><a href=\"#mi\">Mutual "
      "information</a>"
      "<a href=\"#curves\">Training curves</a><a href=\"#analyses\">Compare / "
      "attribute</a></nav>\n";
  XW_RETURN_IF_ERROR(report::StatsSection(c));
  report::DistributionSection(c);
  XW_RETURN_IF_ERROR(report::SearchesSection(c));
  XW_RETURN_IF_ERROR(report::ReplicasSection(c));
  report::ScatterSection(c);
  XW_RETURN_IF_ERROR(report::MiSection(c));
  XW_RETURN_IF_ERROR(report::CurvesSection(c));
  XW_RETURN_IF_ERROR(report::AnalysesSection(c));
  Report r;
  r.html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
      "charset=\"utf-8\"><title>" +
      XmlEscape(opt.title) + "</title><style>" + report::kStyle +
      "</style></head><body>\n" + c.html + "</body></html>\n";
  r.plot_ids = std::move(c.plot_ids);
  return r;
}

}  // namespace xw
