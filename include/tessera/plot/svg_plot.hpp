#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tessera::plot {

/// One axis of a plot: its label, its range and whether it is logarithmic.
struct Axis {
  std::string label;
  double min = 0, max = 1;
  bool log = false;

  /// An axis that holds `values` (non-finite ones ignored) with a little room at both ends;
  /// logarithmic when `allow_log`, every value is positive and they span more than a factor
  /// of 20. A single value v gets v ± |v|/2 (± 0.5 for 0); no values, 0..1.
  static Axis fitted(std::string label, const std::vector<double>& values, bool allow_log = false);
};

/// How a point is drawn: a filled dot or an empty ring, of a radius in pixels.
struct MarkerStyle {
  double radius = 4;
  bool ring = false;
};

/// What a legend entry shows beside its label.
enum class LegendMark { line, dashed, dot, ring };

/// A small x-y chart written as SVG text: linear or logarithmic axes with ticks, lines,
/// markers and a legend. Every picture Tessera draws (benchmark reports, search fronts, run
/// reports) is one of these, so they read alike and nothing is installed to draw them.
///
/// The SVG is marked up for checking what a browser shows: the root has class "plot", the
/// frame, ticks and axis labels sit in a group of class "axes" (the labels of class
/// "x-label" and "y-label"), and each line or set of markers is a group of class "series"
/// whose data-name attribute is the series' name.
class SvgPlot {
 public:
  SvgPlot(std::string title, Axis x, Axis y, int width = 800, int height = 480);

  /// A polyline through `points` (data coordinates); points a log axis cannot show are left out.
  void line(const std::vector<std::pair<double, double>>& points, const std::string& color, bool dashed = false,
            const std::string& name = "");
  /// A point with an optional tooltip (the SVG title a browser shows on hover).
  void marker(double x, double y, const std::string& color, const std::string& tooltip = "",
              MarkerStyle style = {});
  /// Points as one series, each with its tooltip (`tooltips` empty or one per point).
  void markers(const std::vector<std::pair<double, double>>& points, const std::string& color,
               const std::vector<std::string>& tooltips = {}, const std::string& name = "", MarkerStyle style = {});
  /// A legend entry (in the order added), at the right of the plot.
  void legend(const std::string& label, const std::string& color, LegendMark mark = LegendMark::line);
  void legend(const std::string& label, const std::string& color, bool dashed) {
    legend(label, color, dashed ? LegendMark::dashed : LegendMark::line);
  }
  /// Tick labels of the x axis at integer positions instead of numbers (for categories).
  void x_categories(const std::vector<std::string>& names);
  /// A line of text in the middle of the plot, for a plot with nothing to show.
  void message(const std::string& text);
  std::string str() const;

  /// A colour of a fixed palette, by series index.
  static std::string color(size_t index);
  /// A colour along a violet-to-yellow scale (viridis-like) for t in [0, 1], for an ordered
  /// quantity such as a generation.
  static std::string gradient(double t);

 private:
  double px(double x) const;
  double py(double y) const;
  bool shown(double x, double y) const;
  std::string axes() const;
  std::string legend_svg() const;

  struct LegendEntry {
    std::string label, color;
    LegendMark mark;
  };
  std::string title_;
  Axis x_, y_;
  int width_, height_;
  std::vector<std::string> body_;
  std::vector<LegendEntry> legend_;
  std::vector<std::string> categories_;
};

/// `text` with &, <, > and " escaped for SVG/HTML.
std::string xml_escape(const std::string& text);

}  // namespace tessera::plot
