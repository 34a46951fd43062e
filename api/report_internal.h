// Internal to the report: the state shared by its sections and the helpers
// they use (report.cc, report_plots.cc, report_runs.cc).
#ifndef XWIRES_API_REPORT_INTERNAL_H_
#define XWIRES_API_REPORT_INTERNAL_H_

#include <map>
#include <string>
#include <vector>

#include "xwires/api/report.h"
#include "xwires/dataset/query/table.h"

namespace xw::report {

struct Context {
  const Dataset& ds;
  const ReportOptions& opt;
  std::vector<TrialRow> trials;  // matching, by id
  std::map<std::string, std::vector<const TrialRow*>>
      by_arch;  // sorted by arch
  std::string html;
  std::vector<std::string> plot_ids;
  std::map<std::string, std::string>
      profile_colors;  // ProfileColor: the same in every plot and report

  // Appends `svg` (whose data-plot is `id`) in a figure box and records id.
  void AddPlot(const std::string& id, const std::string& svg);
  void Heading(const std::string& anchor, const std::string& text);
  void Para(const std::string& text);  // escaped
};

// Lowercase [a-z0-9-] id from parts joined by '-'.
std::string PlotId(const std::vector<std::string>& parts);
// An xw::Table as an HTML <table> (doubles with 4 significant digits).
std::string HtmlTable(const Table& t);
std::string Fmt(double v, const char* format = "%.4g");

Status StatsSection(Context& c);
void DistributionSection(Context& c);
Status SearchesSection(Context& c);
Status ReplicasSection(Context& c);
void ScatterSection(Context& c);
Status MiSection(Context& c);
Status CurvesSection(Context& c);
Status AnalysesSection(Context& c);

}  // namespace xw::report

#endif  // XWIRES_API_REPORT_INTERNAL_H_
