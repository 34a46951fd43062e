#include "xwires/api/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cctype>

namespace xw {
namespace {

constexpr double kW = 440, kH = 290;  // plot box incl. margins
constexpr double kLeft = 62, kRight = 16, kTop = 28, kBottom = 44;
// Category labels longer than this keep their tail ("...layer3.2.conv1").
constexpr size_t kMaxCategoryChars = 24;
constexpr double kCategoryAngle = 55;  // degrees, rotated up to the left

std::string F(double v) {  // coordinates
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Label(double v) {  // tick labels
  char buf[32];
  if (v == 0) return "0";
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 1e-3 && a < 1e5 ? "%.4g" : "%.3g", v);
  return buf;
}

// Maps data values to pixels along one axis.
struct Scale {
  double lo = 0, hi = 1, p0 = 0, p1 = 1;
  bool log = false;
  bool integer = false;  // only integer ticks (epochs, indices)
  double T(double v) const { return log ? std::log10(v) : v; }
  double operator()(double v) const {
    const double a = T(lo), b = T(hi);
    return p0 + (T(v) - a) / (b - a) * (p1 - p0);
  }
  bool Valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

// The finite (and, on log axes, positive) range of values, padded so that a
// single value still spans something.
Scale Fit(const std::vector<const std::vector<double>*>& data, bool log,
          double p0, double p1) {
  Scale s;
  s.log = log;
  s.p0 = p0;
  s.p1 = p1;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* v : data) {
    for (double d : *v) {
      if (!s.Valid(d)) continue;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
  }
  if (!(lo <= hi)) {
    lo = log ? 1 : 0;
    hi = log ? 10 : 1;
  }
  if (log) {
    if (hi / lo < 10) {
      lo /= 2;
      hi *= 2;
    }
  } else if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double pad = std::max(std::fabs(hi) * 0.05, 1e-3);
    lo -= pad;
    hi += pad;
  } else {
    const double pad = (hi - lo) * 0.04;
    lo -= pad;
    hi += pad;
  }
  s.lo = lo;
  s.hi = hi;
  return s;
}

std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> t;
  const int a = static_cast<int>(std::floor(std::log10(lo)));
  const int b = static_cast<int>(std::ceil(std::log10(hi)));
  const int step = std::max(1, (b - a) / 6);
  const bool minor = b - a <= 2;
  for (int e = a; e <= b; e += step) {
    for (double m :
         minor ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo && v <= hi) t.push_back(v);
    }
  }
  return t;
}

// The chart width widened, if need be, to hold the bold title.
double FitTitle(double w, const std::string& title) {
  return std::max(w, 1.1 * TextWidth(title, 13) + 16);
}

std::string CategoryText(const std::string& s) {
  if (s.size() <= kMaxCategoryChars) return s;
  return "\u2026" + s.substr(s.size() - (kMaxCategoryChars - 1));
}

// Extents of the rotated category labels: down from the axis and left of
// their tick.
double CategoryDrop(const std::vector<std::string>& c) {
  double w = 0;
  for (const std::string& s : c) w = std::max(w, TextWidth(CategoryText(s), 10));
  return c.empty() ? 0 : w * std::sin(kCategoryAngle * M_PI / 180) + 14;
}
double CategoryReach(const std::vector<std::string>& c) {
  double w = 0;
  for (const std::string& s : c) w = std::max(w, TextWidth(CategoryText(s), 10));
  return w * std::cos(kCategoryAngle * M_PI / 180) + 8;
}

std::string Header(const std::string& id, const std::string& title, double w,
                   double h) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" "
         "data-plot=\"" +
         XmlEscape(id) + "\" width=\"" + F(w) + "\" height=\"" + F(h) +
         "\" viewBox=\"0 0 " + F(w) + " " + F(h) + "\" role=\"img\"><title>" +
         XmlEscape(title) + "</title>" +
         "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>" + "<text x=\"" +
         F(w / 2) +
         "\" y=\"17\" text-anchor=\"middle\" font-size=\"13\" "
         "font-weight=\"bold\">" +
         XmlEscape(title) + "</text>";
}

// Frame, grid, ticks and axis labels of a 2-D chart; `drop` is the room the
// x tick labels take below the axis beyond the usual (rotated categories).
std::string Axes(const Scale& sx, const Scale& sy, const Axis& ax,
                 const Axis& ay, double drop = 0) {
  std::string s;
  const double x0 = sx.p0, x1 = sx.p1, y0 = sy.p0,
               y1 = sy.p1;  // y0 bottom, y1 top
  s += "<rect x=\"" + F(x0) + "\" y=\"" + F(y1) + "\" width=\"" + F(x1 - x0) +
       "\" height=\"" + F(y0 - y1) + "\" fill=\"none\" stroke=\"#444\"/>";
  std::vector<double> xt;
  const size_t nc = ax.categories.size();
  if (nc > 0) {
    // Every k-th name, at most about 30 of them.
    const size_t step = (nc + 29) / 30;
    for (size_t i = 0; i < nc; i += step) xt.push_back(static_cast<double>(i + 1));
  } else {
    xt = sx.log ? LogTicks(sx.lo, sx.hi) : NiceTicks(sx.lo, sx.hi);
  }
  if (sx.integer) {
    std::erase_if(xt,
                  [](double t) { return std::fabs(t - std::round(t)) > 1e-9; });
  }
  for (double t : xt) {
    const double p = sx(t);
    s += "<line x1=\"" + F(p) + "\" y1=\"" + F(y0) + "\" x2=\"" + F(p) +
         "\" y2=\"" + F(y1) + "\" stroke=\"#ddd\"/>";
    if (nc > 0) {
      const std::string& name = ax.categories.at(static_cast<size_t>(t) - 1);
      s += "<text transform=\"translate(" + F(p + 3) + " " + F(y0 + 8) + ") rotate(-" +
           F(kCategoryAngle) + ")\" text-anchor=\"end\" font-size=\"10\">" +
           XmlEscape(CategoryText(name)) + "</text>";
    } else {
      s += "<text x=\"" + F(p) + "\" y=\"" + F(y0 + 14) +
           "\" text-anchor=\"middle\" font-size=\"10\">" + Label(t) + "</text>";
    }
  }
  const auto yt = sy.log ? LogTicks(sy.lo, sy.hi) : NiceTicks(sy.lo, sy.hi);
  for (double t : yt) {
    const double p = sy(t);
    s += "<line x1=\"" + F(x0) + "\" y1=\"" + F(p) + "\" x2=\"" + F(x1) +
         "\" y2=\"" + F(p) + "\" stroke=\"#ddd\"/><text x=\"" + F(x0 - 4) +
         "\" y=\"" + F(p + 3) + "\" text-anchor=\"end\" font-size=\"10\">" +
         Label(t) + "</text>";
  }
  s += "<text x=\"" + F((x0 + x1) / 2) + "\" y=\"" + F(y0 + 32 + drop) +
       "\" text-anchor=\"middle\" font-size=\"11\">" +
       XmlEscape(ax.label + (ax.log ? " (log)" : "")) + "</text>";
  s += "<text transform=\"translate(14 " + F((y0 + y1) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\">" +
       XmlEscape(ay.label + (ay.log ? " (log)" : "")) + "</text>";
  return s;
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double TextWidth(const std::string& text, double font_size) {
  // Advance widths (in em) of DejaVu Sans / Liberation Sans, rounded up: the
  // widest of the fonts Chromium falls back to on Linux.
  double em = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
      em += 1.0;
    } else if (std::strchr("il.,:;|!'()[]` ", c) != nullptr) {
      em += 0.4;
    } else if (std::strchr("mwMW@%", c) != nullptr) {
      em += 1.0;
    } else if (std::isupper(c)) {
      em += 0.78;
    } else {
      em += 0.66;
    }
  }
  return em * font_size;
}

std::string ProfileColor(const std::string& profile) {
  // The imported CrossedWires rows name the frameworks themselves.
  if (profile == "torch" || profile == "pytorch") return "#ee4c2c";  // PyTorch's orange-red
  if (profile == "tf" || profile == "tensorflow") return "#1f77b4";  // blue
  if (profile == "reference") return "#2ca02c";  // green
  // FNV-1a of the name over the palette's other colours.
  static const char* const kOthers[] = {"#9467bd", "#8c564b", "#e377c2",
                                        "#7f7f7f", "#bcbd22", "#17becf"};
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : profile) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return kOthers[h % 6];
}

std::string PaletteColor(size_t i) {
  static const char* const kColors[] = {
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColors[i % 10];
}

std::string ViridisColor(double t) {
  // Nine samples of matplotlib's viridis, linearly interpolated.
  static const double kStops[9][3] = {
      {68, 1, 84},    {71, 44, 122},  {59, 81, 139},
      {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
      {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  const double pos = t * 8;
  const int i = std::min(7, static_cast<int>(pos));
  const double f = pos - i;
  char buf[8];
  int c[3];
  for (int k = 0; k < 3; ++k) {
    c[k] = static_cast<int>(
        std::lround(kStops[i][k] + f * (kStops[i + 1][k] - kStops[i][k])));
  }
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

std::vector<double> NiceTicks(double lo, double hi, int n) {
  std::vector<double> t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  // k * step rather than repeated addition: no accumulated rounding.
  for (double k = std::ceil(lo / step); k * step <= hi + step * 1e-9; k += 1) {
    t.push_back(k == 0 ? 0.0 : k * step);
  }
  return t;
}

std::string LinePlotSvg(const std::string& id, const std::string& title,
                        const Axis& x, const Axis& y,
                        const std::vector<LineSeries>& series) {
  // The legend column is as wide as its longest entry.
  double legend = 0;
  for (const auto& s : series) legend = std::max(legend, TextWidth(s.name, 11));
  const double drop = CategoryDrop(x.categories);
  const double left = std::max(kLeft, CategoryReach(x.categories));
  const double plot_right = left + (kW - kLeft);
  const double h = std::max(kH + drop, kTop + 8 + 16.0 * series.size() + 8);
  const double w = FitTitle(plot_right + 28 + legend + 10, title);
  std::vector<const std::vector<double>*> xs, ys;
  std::vector<std::vector<double>> ends;  // y -+ err, for the y range
  ends.reserve(series.size());
  for (const auto& s : series) {
    xs.push_back(&s.x);
    ys.push_back(&s.y);
    ends.emplace_back();
    for (size_t k = 0; k < std::min(s.y.size(), s.err.size()); ++k) {
      if (!std::isfinite(s.err[k])) continue;
      ends.back().push_back(s.y[k] - s.err[k]);
      ends.back().push_back(s.y[k] + s.err[k]);
    }
  }
  for (const auto& e : ends) ys.push_back(&e);
  Scale sx = Fit(xs, x.log, left, plot_right - kRight);
  const Scale sy = Fit(ys, y.log, h - kBottom - drop, kTop);
  sx.integer = !x.log;
  for (const auto& s : series) {
    for (double v : s.x)
      sx.integer = sx.integer && (!std::isfinite(v) || v == std::round(v));
  }
  std::string out = Header(id, title, w, h) + Axes(sx, sy, x, y, drop);
  for (size_t i = 0; i < series.size(); ++i) {
    const LineSeries& s = series[i];
    const std::string color = s.color.empty() ? PaletteColor(i) : s.color;
    const std::string style = "fill=\"none\" stroke=\"" + color +
                              "\" stroke-width=\"1.8\"" +
                              (s.dashed ? " stroke-dasharray=\"5 3\"" : "");
    std::string pts;
    auto flush = [&] {
      if (!pts.empty())
        out += "<polyline " + style + " points=\"" + pts + "\"/>";
      pts.clear();
    };
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!sx.Valid(s.x[k]) || !sy.Valid(s.y[k])) {
        flush();
        continue;
      }
      if (k < s.err.size() && std::isfinite(s.err[k]) &&
          sy.Valid(s.y[k] - s.err[k]) && sy.Valid(s.y[k] + s.err[k])) {
        const double px = sx(s.x[k]), lo = sy(s.y[k] - s.err[k]),
                     hi = sy(s.y[k] + s.err[k]);
        out += "<path d=\"M" + F(px) + " " + F(lo) + "V" + F(hi) + "M" +
               F(px - 4) + " " + F(lo) + "H" + F(px + 4) + "M" + F(px - 4) +
               " " + F(hi) + "H" + F(px + 4) + "\" stroke=\"" + color +
               "\" stroke-width=\"1.5\" fill=\"none\"/>";
      }
      if (s.points) {
        out += "<circle cx=\"" + F(sx(s.x[k])) + "\" cy=\"" + F(sy(s.y[k])) +
               "\" r=\"2.5\" fill=\"" + color + "\" fill-opacity=\"0.7\"/>";
      } else {
        pts += F(sx(s.x[k])) + "," + F(sy(s.y[k])) + " ";
      }
    }
    flush();
    const double ly = kTop + 8 + 16 * i;
    if (s.points) {
      out += "<circle cx=\"" + F(plot_right + 14) + "\" cy=\"" + F(ly) +
             "\" r=\"3\" fill=\"" + color + "\"/>";
    } else {
      out += "<line x1=\"" + F(plot_right + 4) + "\" y1=\"" + F(ly) + "\" x2=\"" +
             F(plot_right + 24) + "\" y2=\"" + F(ly) + "\" " + style + "/>";
    }
    out += "<text x=\"" + F(plot_right + 28) + "\" y=\"" + F(ly + 4) +
           "\" font-size=\"11\">" + XmlEscape(s.name) + "</text>";
  }
  return out + "</svg>";
}

std::string ScatterPlotSvg(const std::string& id, const std::string& title,
                           const Axis& x, const Axis& y,
                           const std::vector<double>& xs,
                           const std::vector<double>& ys,
                           const std::vector<double>& values,
                           const std::string& value_label) {
  const double w = FitTitle(kW + 70, title);
  const Scale sx = Fit({&xs}, x.log, kLeft, kW - kRight);
  const Scale sy = Fit({&ys}, y.log, kH - kBottom, kTop);
  double vlo = INFINITY, vhi = -INFINITY;
  for (double v : values) {
    if (std::isfinite(v)) {
      vlo = std::min(vlo, v);
      vhi = std::max(vhi, v);
    }
  }
  if (!(vlo <= vhi)) vlo = vhi = 0;
  std::string out = Header(id, title, w, kH) + Axes(sx, sy, x, y);
  // Low values first so that the (interesting) divergent points are on top.
  std::vector<size_t> order;
  for (size_t i = 0; i < std::min({xs.size(), ys.size(), values.size()}); ++i) {
    if (sx.Valid(xs[i]) && sy.Valid(ys[i]) && std::isfinite(values[i]))
      order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  for (size_t i : order) {
    const double t = vhi > vlo ? (values[i] - vlo) / (vhi - vlo) : 0.5;
    out += "<circle cx=\"" + F(sx(xs[i])) + "\" cy=\"" + F(sy(ys[i])) +
           "\" r=\"3\" fill=\"" + ViridisColor(t) +
           "\" fill-opacity=\"0.85\"/>";
  }
  // Colour bar.
  const double bx = kW + 8, top = kTop, bottom = kH - kBottom, steps = 20;
  for (int k = 0; k < steps; ++k) {
    const double y0 = bottom - (bottom - top) * (k + 1) / steps;
    out += "<rect x=\"" + F(bx) + "\" y=\"" + F(y0) +
           "\" width=\"12\" height=\"" + F((bottom - top) / steps + 0.5) +
           "\" fill=\"" + ViridisColor((k + 0.5) / steps) + "\"/>";
  }
  out += "<text x=\"" + F(bx + 15) + "\" y=\"" + F(top + 8) +
         "\" font-size=\"10\">" + Label(vhi) + "</text><text x=\"" +
         F(bx + 15) + "\" y=\"" + F(bottom) + "\" font-size=\"10\">" +
         Label(vlo) + "</text><text transform=\"translate(" + F(bx + 44) + " " +
         F((top + bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"10\">" +
         XmlEscape(value_label) + "</text>";
  return out + "</svg>";
}

std::string BarPlotSvg(const std::string& id, const std::string& title,
                       const std::vector<std::string>& labels,
                       const std::vector<double>& values,
                       const std::vector<double>& errors,
                       const std::string& value_label,
                       const std::vector<double>& markers) {
  // The label column is as wide as the longest label.
  double label_w = 40;
  for (const std::string& l : labels) label_w = std::max(label_w, TextWidth(l, 11));
  const double left = label_w + 14, right = 30, bar = 14, gap = 5, top = kTop + 4;
  const double h = top + labels.size() * (bar + gap) + 40;
  const double w = FitTitle(std::max(kW + 60, left + 300 + right), title);
  std::vector<double> ends;
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = std::isfinite(values[i]) ? values[i] : 0;
    const double e = i < errors.size() && std::isfinite(errors[i]) ? errors[i] : 0;
    ends.push_back(v + e);
    ends.push_back(v - e);
    if (i < markers.size() && std::isfinite(markers[i])) ends.push_back(markers[i]);
  }
  ends.push_back(0);
  Scale sx = Fit({&ends}, false, left, w - right);
  sx.lo = std::min(0.0, sx.lo);
  const double y_axis = top + labels.size() * (bar + gap);
  std::string out = Header(id, title, w, h);
  for (double t : NiceTicks(sx.lo, sx.hi)) {
    out += "<line x1=\"" + F(sx(t)) + "\" y1=\"" + F(top) + "\" x2=\"" +
           F(sx(t)) + "\" y2=\"" + F(y_axis) +
           "\" stroke=\"#ddd\"/><text x=\"" + F(sx(t)) + "\" y=\"" +
           F(y_axis + 13) + "\" text-anchor=\"middle\" font-size=\"10\">" +
           Label(t) + "</text>";
  }
  for (size_t i = 0; i < labels.size() && i < values.size(); ++i) {
    const double y = top + i * (bar + gap);
    const double v = std::isfinite(values[i]) ? values[i] : 0;
    const double x0 = sx(std::min(0.0, v)), x1 = sx(std::max(0.0, v));
    out += "<text x=\"" + F(left - 6) + "\" y=\"" + F(y + bar - 3) +
           "\" text-anchor=\"end\" font-size=\"11\">" + XmlEscape(labels[i]) +
           "</text>";
    out += "<rect x=\"" + F(x0) + "\" y=\"" + F(y) + "\" width=\"" +
           F(std::max(0.5, x1 - x0)) + "\" height=\"" + F(bar) + "\" fill=\"" +
           PaletteColor(labels[i].find('+') == std::string::npos ? 0 : 1) +
           "\"/>";
    if (i < errors.size() && std::isfinite(errors[i]) && errors[i] > 0) {
      const double ym = y + bar / 2;
      out += "<line x1=\"" + F(sx(v - errors[i])) + "\" y1=\"" + F(ym) +
             "\" x2=\"" + F(sx(v + errors[i])) + "\" y2=\"" + F(ym) +
             "\" stroke=\"#000\"/>";
    }
    if (i < markers.size() && std::isfinite(markers[i])) {
      out += "<line class=\"marker\" x1=\"" + F(sx(markers[i])) + "\" y1=\"" + F(y - 2) +
             "\" x2=\"" + F(sx(markers[i])) + "\" y2=\"" + F(y + bar + 2) +
             "\" stroke=\"#000\" stroke-width=\"2.5\"/>";
    }
  }
  out += "<line x1=\"" + F(sx(0)) + "\" y1=\"" + F(top) + "\" x2=\"" +
         F(sx(0)) + "\" y2=\"" + F(y_axis) + "\" stroke=\"#444\"/><text x=\"" +
         F((left + w - right) / 2) + "\" y=\"" + F(y_axis + 30) +
         "\" text-anchor=\"middle\" font-size=\"11\">" +
         XmlEscape(value_label) + "</text>";
  return out + "</svg>";
}

}  // namespace xw
