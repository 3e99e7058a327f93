#include "tessera/bench/svg_plot.hpp"

#include <cmath>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::bench {
namespace {

constexpr double kLeft = 70, kRight = 270, kTop = 40, kBottom = 60;  // margins; the legend sits right

std::string num(double v) { return fixed(v, 1); }

std::string tick_label(double v) { return format("%g", v); }

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

void SvgPlot::line(const std::vector<std::pair<double, double>>& points, const std::string& color, bool dashed) {
  std::string d;
  for (const auto& [x, y] : points) {
    if ((x_.log && x <= 0) || (y_.log && y <= 0)) continue;
    d += num(px(x)) + "," + num(py(y)) + " ";
  }
  if (d.empty()) return;
  body_.push_back("<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
                  (dashed ? " stroke-dasharray=\"6,4\"" : "") + " points=\"" + d + "\"/>");
}

void SvgPlot::marker(double x, double y, const std::string& color, const std::string& tooltip) {
  if ((x_.log && x <= 0) || (y_.log && y <= 0)) return;
  std::string m = "<circle cx=\"" + num(px(x)) + "\" cy=\"" + num(py(y)) + "\" r=\"4\" fill=\"" + color + "\">";
  if (!tooltip.empty()) m += "<title>" + xml_escape(tooltip) + "</title>";
  body_.push_back(m + "</circle>");
}

void SvgPlot::legend(const std::string& label, const std::string& color, bool dashed) {
  legend_.push_back({label, {color, dashed}});
}

void SvgPlot::x_categories(const std::vector<std::string>& names) { categories_ = names; }

std::string SvgPlot::str() const {
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width_ << "\" height=\"" << height_
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << width_ / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(title_)
    << "</text>\n";
  const double x0 = kLeft, x1 = width_ - kRight, y0 = height_ - kBottom, y1 = kTop;
  s << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\"" << y0 - y1
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  // Ticks: decades on a log axis, five steps on a linear one, or the categories.
  auto ticks = [](const Axis& a) {
    std::vector<double> t;
    if (a.log) {
      for (double v = std::pow(10.0, std::ceil(std::log10(a.min) - 1e-9)); v <= a.max * (1 + 1e-9); v *= 10)
        t.push_back(v);
    } else {
      // A round step (1, 2 or 5 times a power of ten) giving about five ticks.
      const double raw = (a.max - a.min) / 5.0, decade = std::pow(10.0, std::floor(std::log10(raw)));
      const double step = raw / decade < 1.5 ? decade : raw / decade < 3.5 ? 2 * decade : 5 * decade;
      for (double v = std::ceil(a.min / step) * step; v <= a.max * (1 + 1e-9); v += step) t.push_back(v);
    }
    return t;
  };
  if (!categories_.empty()) {
    for (size_t i = 0; i < categories_.size(); ++i) {
      const double x = px(static_cast<double>(i + 1));
      s << "<text x=\"" << num(x) << "\" y=\"" << y0 + 16 << "\" text-anchor=\"middle\">" << xml_escape(categories_[i])
        << "</text>\n";
    }
  } else {
    for (double v : ticks(x_)) {
      const double x = px(v);
      s << "<line x1=\"" << num(x) << "\" y1=\"" << y0 << "\" x2=\"" << num(x) << "\" y2=\"" << y1
        << "\" stroke=\"#ddd\"/><text x=\"" << num(x) << "\" y=\"" << y0 + 16 << "\" text-anchor=\"middle\">"
        << tick_label(v) << "</text>\n";
    }
  }
  for (double v : ticks(y_)) {
    const double y = py(v);
    s << "<line x1=\"" << x0 << "\" y1=\"" << num(y) << "\" x2=\"" << x1 << "\" y2=\"" << num(y)
      << "\" stroke=\"#ddd\"/><text x=\"" << x0 - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
      << tick_label(v) << "</text>\n";
  }
  s << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << height_ - 18 << "\" text-anchor=\"middle\">"
    << xml_escape(x_.label) << "</text>\n";
  s << "<text transform=\"translate(18," << (y0 + y1) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << xml_escape(y_.label) << "</text>\n";
  for (const auto& b : body_) s << b << "\n";
  double ly = y1 + 10;
  for (const auto& [label, style] : legend_) {
    s << "<line x1=\"" << x1 + 12 << "\" y1=\"" << ly << "\" x2=\"" << x1 + 36 << "\" y2=\"" << ly << "\" stroke=\""
      << style.first << "\" stroke-width=\"2\"" << (style.second ? " stroke-dasharray=\"6,4\"" : "") << "/>";
    s << "<text x=\"" << x1 + 42 << "\" y=\"" << ly + 4 << "\" font-size=\"11\">" << xml_escape(label) << "</text>\n";
    ly += 18;
  }
  s << "</svg>\n";
  return s.str();
}

std::string SvgPlot::color(size_t index) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[index % (sizeof palette / sizeof palette[0])];
}

}  // namespace tessera::bench
