#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tessera::bench {

/// A small x-y chart written as SVG text: linear or logarithmic axes with ticks, lines,
/// markers and a legend. Enough for the benchmark plots, with nothing to install at run time.
class SvgPlot {
 public:
  struct Axis {
    std::string label;
    double min = 0, max = 1;
    bool log = false;
  };
  SvgPlot(std::string title, Axis x, Axis y, int width = 800, int height = 480);

  /// A polyline through `points` (data coordinates); `dashed` for a second series kind.
  void line(const std::vector<std::pair<double, double>>& points, const std::string& color, bool dashed = false);
  void marker(double x, double y, const std::string& color, const std::string& tooltip = "");
  /// A legend entry (in the order added).
  void legend(const std::string& label, const std::string& color, bool dashed = false);
  /// Tick labels of the x axis at integer positions instead of numbers (for categories).
  void x_categories(const std::vector<std::string>& names);
  std::string str() const;

  /// A colour of a fixed palette, by series index.
  static std::string color(size_t index);

 private:
  double px(double x) const;
  double py(double y) const;
  std::string title_;
  Axis x_, y_;
  int width_, height_;
  std::vector<std::string> body_;
  std::vector<std::pair<std::string, std::pair<std::string, bool>>> legend_;
  std::vector<std::string> categories_;
};

/// `text` with &, <, > and " escaped for SVG/XML.
std::string xml_escape(const std::string& text);

}  // namespace tessera::bench
