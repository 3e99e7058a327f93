#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include "support/text_count.hpp"
#include "tessera/core/error.hpp"
#include "tessera/plot/svg_plot.hpp"

using namespace tessera::plot;

using tessera::testing::count_of;

namespace {

/// The pixel coordinates of a polyline's points, in order.
std::vector<std::pair<double, double>> polyline_points(const std::string& svg) {
  const size_t at = svg.find("points=\"");
  REQUIRE(at != std::string::npos);
  std::vector<std::pair<double, double>> points;
  std::string list = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  const std::regex pair(R"(([-0-9.]+),([-0-9.]+))");
  for (std::sregex_iterator it(list.begin(), list.end(), pair), end; it != end; ++it)
    points.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
  return points;
}

}  // namespace

TEST_CASE("A plot maps data onto its frame, linear and logarithmic", "[plot]") {
  // Frame: x from 70 to 800-270 = 530, y from 480-60 = 420 (bottom) to 40 (top).
  SvgPlot lin("t", {"x", 0, 10}, {"y", 0, 100});
  lin.line({{0, 0}, {5, 50}, {10, 100}}, "#000", false, "s");
  auto p = polyline_points(lin.str());
  REQUIRE(p.size() == 3);
  CHECK(p[0].first == Approx(70));
  CHECK(p[0].second == Approx(420));
  CHECK(p[1].first == Approx(300));
  CHECK(p[1].second == Approx(230));
  CHECK(p[2].first == Approx(530));
  CHECK(p[2].second == Approx(40));
  // On a log axis 10 lies halfway between 1 and 100; points it cannot show are left out.
  SvgPlot log("t", {"x", 1, 100, true}, {"y", 0, 1});
  log.line({{0, 0.5}, {1, 0}, {10, 0.5}, {100, 1}, {std::nan(""), 0.5}}, "#000");
  p = polyline_points(log.str());
  REQUIRE(p.size() == 3);
  CHECK(p[1].first == Approx(300));
  CHECK(p[1].second == Approx(230));
}

TEST_CASE("A plot's markup names its axes and series for a browser check", "[plot]") {
  SvgPlot svg("Loss & more", {"step", 0, 100}, {"loss", 0.01, 10, true});
  svg.line({{0, 5}, {100, 0.05}}, SvgPlot::color(0), false, "run <a>");
  svg.markers({{50, 1}, {100, 0.1}}, SvgPlot::color(1), {"first", "second"}, "validation", {3, true});
  svg.legend("run", SvgPlot::color(0));
  svg.legend("validation", SvgPlot::color(1), LegendMark::ring);
  const std::string s = svg.str();
  CHECK(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\"", 0) == 0);
  CHECK(count_of(s, "<g class=\"axes\">") == 1);
  CHECK(count_of(s, "<g class=\"series\"") == 2);
  CHECK(s.find("data-name=\"run &lt;a&gt;\"") != std::string::npos);
  CHECK(s.find("Loss &amp; more") != std::string::npos);
  CHECK(s.find("class=\"y-label\"") != std::string::npos);
  CHECK(s.find("loss (log scale)") != std::string::npos);
  CHECK(count_of(s, "<title>") == 2);
  CHECK(count_of(s, "fill=\"none\" stroke=\"" + SvgPlot::color(1) + "\"") == 3);  // two rings and the legend's
  // Decades on the log axis: 0.01, 0.1, 1, 10.
  for (const char* tick : {">0.01<", ">0.1<", ">1<", ">10<"}) CHECK(s.find(tick) != std::string::npos);
  CHECK_THROWS_AS(svg.markers({{1, 1}}, "#000", {"a", "b"}), tessera::Error);
}

TEST_CASE("Axes fitted to values pad them, start at zero near it, and go logarithmic over 20x", "[plot]") {
  const Axis a = Axis::fitted("loss", {0.2, 0.3, 0.25});
  CHECK_FALSE(a.log);
  CHECK(a.min < 0.2);
  CHECK(a.max > 0.3);
  CHECK(Axis::fitted("n", {1, 10, 5}).min == 0.0);  // 1 is near zero against a range of 9
  const Axis l = Axis::fitted("loss", {3.0, 0.05, 0.1}, true);
  CHECK(l.log);
  CHECK(l.min < 0.05);
  CHECK(l.max > 3.0);
  CHECK_FALSE(Axis::fitted("loss", {3.0, 0.05}, false).log);
  CHECK_FALSE(Axis::fitted("v", {-1.0, 50.0}, true).log);  // not all positive
  const Axis one = Axis::fitted("v", {2.0, std::numeric_limits<double>::infinity()});
  CHECK(one.min == Approx(1.0));
  CHECK(one.max == Approx(3.0));
  const Axis lr = Axis::fitted("lr", {0.001, 0.001});
  CHECK(lr.min == Approx(0.0005));
  CHECK(lr.max == Approx(0.0015));
  const Axis none = Axis::fitted("v", {});
  CHECK(none.max > none.min);
  CHECK_THROWS_AS(SvgPlot("t", {"x", 1, 1}, {"y", 0, 1}), tessera::Error);
  CHECK_THROWS_AS(SvgPlot("t", {"x", 0, 1, true}, {"y", 0, 1}), tessera::Error);
}

TEST_CASE("The gradient runs from violet to yellow", "[plot]") {
  CHECK(SvgPlot::gradient(0.0) == "#440154");
  CHECK(SvgPlot::gradient(1.0) == "#fde725");
  CHECK(SvgPlot::gradient(-3.0) == SvgPlot::gradient(0.0));
  CHECK(SvgPlot::gradient(0.5) != SvgPlot::gradient(0.25));
}

TEST_CASE("Axes a few ulps wide still end with a handful of ticks", "[plot]") {
  // Found by the metrics-log fuzz target: `v += step` did not move on a range one ulp wide next
  // to its values, and the tick list grew until memory ran out.
  for (const Axis& axis : {Axis{"loss", 1.0, std::nextafter(1.0, 2.0)}, Axis{"step", 1e17, 1e17 + 16}}) {
    SvgPlot svg("t", axis, {"y", 0, 1});
    const std::string s = svg.str();
    INFO(axis.label);
    CHECK(count_of(s, "<text") < 40);
  }
}
