// Small self-contained SVG charts for the HTML report: line charts,
// scatter plots coloured by a value (viridis), horizontal bar charts with
// error bars. Every chart is one <svg> element carrying data-plot="<id>" so
// that tests can find it in a rendered page; no scripts, fonts or external
// resources are referenced.
//
// Non-finite points are skipped (lines break there). A log axis drops
// values <= 0. Text is XML-escaped. Every chart sizes itself to its text
// (legend entries, titles, bar labels, category labels) from a conservative
// estimate of the text's width, so nothing is clipped at the figure's edge
// (the report test measures the rendered text in headless Chromium).
// Pure functions, thread-safe.
#ifndef XWIRES_API_SVG_PLOT_H_
#define XWIRES_API_SVG_PLOT_H_

#include <string>
#include <utility>
#include <vector>

namespace xw {

// Escapes & < > " ' for HTML/SVG text and attributes.
std::string XmlEscape(const std::string& s);

struct Axis {
  // Implicit: charts are called with {"label"} and {"label", true}.
  Axis(std::string label_ = "", bool log_ = false) : label(std::move(label_)), log(log_) {}
  std::string label;
  bool log = false;
  // x axis only: names of the positions 1..n (e.g. module names), drawn
  // rotated under their ticks instead of numbers.
  std::vector<std::string> categories;
};

struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;
  std::string color;    // "" = palette colour of the series' index
  bool points = false;  // dots at the points instead of a line
  // Half-widths of vertical error bars at the points (empty: none; NaN: none
  // at that point); the y axis covers y +- err.
  std::vector<double> err = {};
};

// Colour i of the categorical palette (10 colours, cycling).
std::string PaletteColor(size_t i);

// The colour of a profile in every chart of every report: torch (and the
// imported "pytorch"), tf (and "tensorflow") and reference have fixed colours; any other name takes a palette colour chosen
// by a hash of the name (so it does not depend on which other profiles a
// dataset holds).
std::string ProfileColor(const std::string& profile);

// Width in pixels that `text` at `font_size` px takes at most in a common
// sans-serif font (an upper estimate used for layout).
double TextWidth(const std::string& text, double font_size);
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

// Horizontal bars value[i] +- error[i] (error may be empty), one per label;
// markers[i] (may be empty; NaN: none), e.g. a null baseline, is drawn as a
// black tick across bar i.
std::string BarPlotSvg(const std::string& id, const std::string& title,
                       const std::vector<std::string>& labels,
                       const std::vector<double>& values,
                       const std::vector<double>& errors,
                       const std::string& value_label,
                       const std::vector<double>& markers = {});

// "Nice" tick positions (1, 2, 5 x 10^k steps) covering [lo, hi], about n.
std::vector<double> NiceTicks(double lo, double hi, int n = 5);

}  // namespace xw

#endif  // XWIRES_API_SVG_PLOT_H_
