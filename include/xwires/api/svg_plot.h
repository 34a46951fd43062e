// Small self-contained SVG charts for the HTML report: line charts,
// scatter plots coloured by a value (viridis), horizontal bar charts with
// error bars. Every chart is one <svg> element carrying data-plot="<id>" so
// that tests can find it in a rendered page; no scripts, fonts or external
// resources are referenced.
//
// Non-finite points are skipped (lines break there). A log axis drops
// values <= 0. Text is XML-escaped. Pure functions, thread-safe.
#ifndef XWIRES_API_SVG_PLOT_H_
#define XWIRES_API_SVG_PLOT_H_

#include <string>
#include <vector>

namespace xw {

// Escapes & < > " ' for HTML/SVG text and attributes.
std::string XmlEscape(const std::string& s);

struct Axis {
  std::string label;
  bool log = false;
};

struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;
  std::string color;  // "" = palette colour of the series' index
};

// Colour i of the categorical palette (10 colours, cycling).
std::string PaletteColor(size_t i);
// Viridis colour of t in [0, 1] (clamped) as "#rrggbb".
std::string ViridisColor(double t);

// Line chart of one or more series with a legend.
std::string LinePlotSvg(const std::string& id, const std::string& title,
                        const Axis& x, const Axis& y,
                        const std::vector<LineSeries>& series);

// Scatter of (x[i], y[i]) coloured by value[i] (min-max mapped to viridis,
// with a colour bar labelled `value_label`).
std::string ScatterPlotSvg(const std::string& id, const std::string& title,
                           const Axis& x, const Axis& y,
                           const std::vector<double>& xs,
                           const std::vector<double>& ys,
                           const std::vector<double>& values,
                           const std::string& value_label);

// Horizontal bars value[i] +- error[i] (error may be empty), one per label.
std::string BarPlotSvg(const std::string& id, const std::string& title,
                       const std::vector<std::string>& labels,
                       const std::vector<double>& values,
                       const std::vector<double>& errors,
                       const std::string& value_label);

// "Nice" tick positions (1, 2, 5 x 10^k steps) covering [lo, hi], about n.
std::vector<double> NiceTicks(double lo, double hi, int n = 5);

}  // namespace xw

#endif  // XWIRES_API_SVG_PLOT_H_
