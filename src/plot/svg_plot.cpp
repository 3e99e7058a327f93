#include "tessera/plot/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::plot {
namespace {

constexpr double kLeft = 70, kRight = 270, kTop = 40, kBottom = 60;  // margins; the legend sits right

std::string num(double v) { return fixed(v, 1); }

// A legend label's room: from its mark to the right edge, in characters of the 11 px legend
// font. 6.4 px a character is DejaVu Sans' average at 11 px, a little generous, so that a line
// measured by it fits in the browser (scripts/check_report_page.py checks the legend's boxes).
constexpr double kLegendTextX = 42, kLegendCharPx = 6.4;

/// `label` in lines of at most `width` characters, broken at spaces where it can be and inside
/// a word only where the word alone is longer than a line, so no legend label is ever cut.
std::vector<std::string> wrap(const std::string& label, size_t width) {
  std::vector<std::string> lines;
  std::string line, word;
  std::istringstream words(label);
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    if (line.empty()) {
      for (; word.size() > width; word.erase(0, width)) lines.push_back(word.substr(0, width));
      line = word;
    } else {
      line += " " + word;
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string tick_label(double v) { return format("%g", std::abs(v) < 1e-12 ? 0.0 : v); }

/// Tick positions: decades on a log axis (with 2 and 5 between when it spans under two
/// decades), about five round steps (1, 2 or 5 times a power of ten) on a linear one.
std::vector<double> ticks(const Axis& a) {
  std::vector<double> t;
  if (a.log) {
    const bool fine = a.max / a.min < 100;
    // At most the decades of a double; a minimum of 0 would start at decade 0, which never grows.
    double decade = std::pow(10.0, std::floor(std::log10(a.min)));
    for (int d = 0; d < 700 && decade > 0 && decade <= a.max * (1 + 1e-9); ++d, decade *= 10)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = decade * m;
        if ((m == 1.0 || fine) && v >= a.min * (1 - 1e-9) && v <= a.max * (1 + 1e-9)) t.push_back(v);
      }
    return t;
  }
  const double raw = (a.max - a.min) / 5.0, decade = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / decade < 1.5 ? decade : raw / decade < 3.5 ? 2 * decade : 5 * decade;
  // Counted, not `v += step`: on a range a few ulps wide next to its values the sum does not
  // move, and the loop never ended (found by the metrics-log fuzz target). About five ticks
  // are wanted; a handful more is the most rounding can give.
  const double first = std::ceil(a.min / step) * step;
  for (int i = 0; i < 12; ++i) {
    const double v = first + i * step;
    if (!(v <= a.max + 1e-9 * std::abs(a.max))) break;
    if (t.empty() || v > t.back()) t.push_back(v);
  }
  return t;
}

std::string dash(bool dashed) { return dashed ? " stroke-dasharray=\"6,4\"" : ""; }

std::string circle(double cx, double cy, const std::string& color, MarkerStyle style) {
  return "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(style.radius) + "\" " +
         (style.ring ? "fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\"" : "fill=\"" + color + "\"");
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

Axis Axis::fitted(std::string label, const std::vector<double>& values, bool allow_log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) return {std::move(label), 0.0, 1.0, false};
  if (allow_log && lo > 0 && hi / lo > 20) return {std::move(label), lo / 1.15, hi * 1.15, true};
  // One value: a range around it in its own scale (a constant learning rate of 0.001 is not
  // drawn on -0.5..0.5).
  if (hi - lo <= 0) {
    const double half = lo != 0 ? 0.5 * std::abs(lo) : 0.5;
    return {std::move(label), lo - half, hi + half, false};
  }
  const double pad = 0.05 * (hi - lo);
  // A range of positive values that starts near zero starts at zero, as readers expect.
  const double bottom = lo >= 0 && lo - pad < 0.25 * (hi - lo) ? 0.0 : lo - pad;
  return {std::move(label), bottom, hi + pad, false};
}

SvgPlot::SvgPlot(std::string title, Axis x, Axis y, int width, int height)
    : title_(std::move(title)), x_(std::move(x)), y_(std::move(y)), width_(width), height_(height) {
  for (const Axis* a : {&x_, &y_})
    if (!(a->max > a->min) || (a->log && !(a->min > 0)))
      throw Error("plot '" + title_ + "': axis '" + a->label + "' needs min < max (and min > 0 on a log axis)");
}

double SvgPlot::px(double x) const {
  const double f = x_.log ? (std::log10(x) - std::log10(x_.min)) / (std::log10(x_.max) - std::log10(x_.min))
                          : (x - x_.min) / (x_.max - x_.min);
  return kLeft + f * (width_ - kLeft - kRight);
}

double SvgPlot::py(double y) const {
  const double f = y_.log ? (std::log10(y) - std::log10(y_.min)) / (std::log10(y_.max) - std::log10(y_.min))
                          : (y - y_.min) / (y_.max - y_.min);
  return height_ - kBottom - f * (height_ - kTop - kBottom);
}

bool SvgPlot::shown(double x, double y) const {
  return std::isfinite(x) && std::isfinite(y) && !(x_.log && x <= 0) && !(y_.log && y <= 0);
}

void SvgPlot::line(const std::vector<std::pair<double, double>>& points, const std::string& color, bool dashed,
                   const std::string& name) {
  std::string d;
  for (const auto& [x, y] : points)
    if (shown(x, y)) d += num(px(x)) + "," + num(py(y)) + " ";
  if (d.empty()) return;
  body_.push_back("<g class=\"series\" data-name=\"" + xml_escape(name) + "\"><polyline fill=\"none\" stroke=\"" +
                  color + "\" stroke-width=\"2\"" + dash(dashed) + " points=\"" + d + "\"/></g>");
}

void SvgPlot::marker(double x, double y, const std::string& color, const std::string& tooltip, MarkerStyle style) {
  markers({{x, y}}, color, tooltip.empty() ? std::vector<std::string>{} : std::vector<std::string>{tooltip}, "", style);
}

void SvgPlot::markers(const std::vector<std::pair<double, double>>& points, const std::string& color,
                      const std::vector<std::string>& tooltips, const std::string& name, MarkerStyle style) {
  if (!tooltips.empty() && tooltips.size() != points.size())
    throw Error("plot '" + title_ + "': " + std::to_string(tooltips.size()) + " tooltips for " +
                std::to_string(points.size()) + " points");
  std::string g;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto [x, y] = points[i];
    if (!shown(x, y)) continue;
    g += circle(px(x), py(y), color, style);
    g += tooltips.empty() || tooltips[i].empty() ? "/>" : "><title>" + xml_escape(tooltips[i]) + "</title></circle>";
  }
  if (!g.empty()) body_.push_back("<g class=\"series\" data-name=\"" + xml_escape(name) + "\">" + g + "</g>");
}

void SvgPlot::legend(const std::string& label, const std::string& color, LegendMark mark) {
  legend_.push_back({label, color, mark});
}

void SvgPlot::x_categories(const std::vector<std::string>& names) { categories_ = names; }

void SvgPlot::message(const std::string& text) {
  body_.push_back("<text class=\"message\" x=\"" + num((kLeft + width_ - kRight) / 2) + "\" y=\"" +
                  num(height_ / 2.0) + "\" text-anchor=\"middle\" fill=\"#666\">" + xml_escape(text) + "</text>");
}

std::string SvgPlot::axes() const {
  std::ostringstream s;
  const double x0 = kLeft, x1 = width_ - kRight, y0 = height_ - kBottom, y1 = kTop;
  s << "<g class=\"axes\">\n<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\""
    << y0 - y1 << "\" fill=\"none\" stroke=\"black\"/>\n";
  if (!categories_.empty()) {
    for (size_t i = 0; i < categories_.size(); ++i)
      s << "<text x=\"" << num(px(static_cast<double>(i + 1))) << "\" y=\"" << y0 + 16 << "\" text-anchor=\"middle\">"
        << xml_escape(categories_[i]) << "</text>\n";
  } else {
    for (double v : ticks(x_))
      s << "<line x1=\"" << num(px(v)) << "\" y1=\"" << y0 << "\" x2=\"" << num(px(v)) << "\" y2=\"" << y1
        << "\" stroke=\"#ddd\"/><text x=\"" << num(px(v)) << "\" y=\"" << y0 + 16 << "\" text-anchor=\"middle\">"
        << tick_label(v) << "</text>\n";
  }
  for (double v : ticks(y_))
    s << "<line x1=\"" << x0 << "\" y1=\"" << num(py(v)) << "\" x2=\"" << x1 << "\" y2=\"" << num(py(v))
      << "\" stroke=\"#ddd\"/><text x=\"" << x0 - 6 << "\" y=\"" << num(py(v) + 4) << "\" text-anchor=\"end\">"
      << tick_label(v) << "</text>\n";
  s << "<text class=\"x-label\" x=\"" << (x0 + x1) / 2 << "\" y=\"" << height_ - 18 << "\" text-anchor=\"middle\">"
    << xml_escape(x_.label + (x_.log ? " (log scale)" : "")) << "</text>\n";
  s << "<text class=\"y-label\" transform=\"translate(18," << (y0 + y1) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << xml_escape(y_.label + (y_.log ? " (log scale)" : "")) << "</text>\n</g>\n";
  return s.str();
}

std::string SvgPlot::legend_svg() const {
  std::ostringstream s;
  const double x1 = width_ - kRight;
  const auto chars = static_cast<size_t>(std::max(8.0, (kRight - kLegendTextX - 6) / kLegendCharPx));
  double ly = kTop + 10;
  s << "<g class=\"legend\">\n";
  for (const auto& e : legend_) {
    switch (e.mark) {
      case LegendMark::line:
      case LegendMark::dashed:
        s << "<line x1=\"" << x1 + 12 << "\" y1=\"" << ly << "\" x2=\"" << x1 + 36 << "\" y2=\"" << ly
          << "\" stroke=\"" << e.color << "\" stroke-width=\"2\"" << dash(e.mark == LegendMark::dashed) << "/>";
        break;
      case LegendMark::dot:
      case LegendMark::ring: s << circle(x1 + 24, ly, e.color, {5, e.mark == LegendMark::ring}) << "/>"; break;
    }
    const auto lines = wrap(e.label, chars);
    s << "<text x=\"" << x1 + kLegendTextX << "\" y=\"" << ly + 4 << "\" font-size=\"11\">";
    for (size_t i = 0; i < lines.size(); ++i)
      s << "<tspan x=\"" << x1 + kLegendTextX << "\"" << (i ? " dy=\"13\"" : "") << ">" << xml_escape(lines[i])
        << "</tspan>";
    s << "</text>\n";
    ly += 18 + 13.0 * static_cast<double>(lines.size() - 1);
  }
  s << "</g>\n";
  return s.str();
}

std::string SvgPlot::str() const {
  std::ostringstream s;
  // The viewBox lets a page scale the picture to its width (the run report does); on its own it
  // shows at width x height.
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << width_ << "\" height=\"" << height_
    << "\" viewBox=\"0 0 " << width_ << " " << height_ << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text class=\"title\" x=\"" << width_ / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(title_) << "</text>\n";
  s << axes();
  for (const auto& b : body_) s << b << "\n";
  s << legend_svg() << "</svg>\n";
  return s.str();
}

std::string SvgPlot::color(size_t index) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[index % (sizeof palette / sizeof palette[0])];
}

std::string SvgPlot::gradient(double t) {
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4.0;
  const int k = std::min(3, static_cast<int>(t));
  const double f = t - k;
  const auto channel = [&](int c) { return static_cast<int>(stops[k][c] + f * (stops[k + 1][c] - stops[k][c])); };
  return format("#%02x%02x%02x", channel(0), channel(1), channel(2));
}

}  // namespace tessera::plot
