#include "tessera/search/front_plot.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/plot/svg_plot.hpp"

namespace tessera::search {
namespace {

const char* const kFrontColour = "#d62728";

/// Whether a candidate has a dot: it trained, and both its objectives are finite.
bool plotted(const CandidateRecord& r, size_t x, size_t y) {
  return !r.failed && std::isfinite(r.objectives[x]) && std::isfinite(r.objectives[y]);
}

/// The (x, y) Pareto front of every trained candidate as a staircase, in data coordinates;
/// with more than two objectives the final front ringed need not lie on it.
std::vector<std::pair<double, double>> staircase(const SearchState& state, size_t x, size_t y) {
  std::vector<size_t> finished;
  std::vector<Objectives> plane;
  for (size_t i = 0; i < state.history.size(); ++i) {
    if (!plotted(state.history[i], x, y)) continue;
    finished.push_back(i);
    plane.push_back({state.history[i].objectives[x], state.history[i].objectives[y]});
  }
  std::vector<std::pair<double, double>> front;
  const auto fronts = non_dominated_sort(plane);
  if (!fronts.empty())
    for (const size_t k : fronts[0])
      front.push_back({state.history[finished[k]].objectives[x], state.history[finished[k]].objectives[y]});
  std::sort(front.begin(), front.end());
  std::vector<std::pair<double, double>> steps;
  for (size_t k = 0; k < front.size(); ++k) {
    if (k > 0) steps.push_back({front[k].first, front[k - 1].second});
    steps.push_back(front[k]);
  }
  return steps;
}

}  // namespace

std::string front_svg(const SearchState& state, const std::vector<size_t>& front, size_t x, size_t y) {
  std::vector<double> xs, ys;
  int64_t last_generation = 0;
  for (const auto& r : state.history) {
    last_generation = std::max(last_generation, r.generation);
    if (!plotted(r, x, y)) continue;
    xs.push_back(r.objectives[x]);
    ys.push_back(r.objectives[y]);
  }
  plot::SvgPlot svg("search: " + state.objectives[y] + " against " + state.objectives[x],
                    plot::Axis::fitted(state.objectives[x], xs, true), plot::Axis::fitted(state.objectives[y], ys),
                    720, 440);
  if (xs.empty()) {
    svg.message("no candidate finished training");
    return svg.str();
  }
  // A generation's colour: the first violet, the last yellow.
  const auto colour = [&](int64_t generation) {
    return plot::SvgPlot::gradient(
        last_generation > 0 ? static_cast<double>(generation) / static_cast<double>(last_generation) : 0.0);
  };
  svg.line(staircase(state, x, y), kFrontColour, false, "front in this plane");
  for (int64_t g = 0; g <= last_generation; ++g) {
    std::vector<std::pair<double, double>> points;
    std::vector<std::string> ids;
    for (const auto& r : state.history)
      if (r.generation == g && plotted(r, x, y)) {
        points.push_back({r.objectives[x], r.objectives[y]});
        ids.push_back(r.id);
      }
    svg.markers(points, colour(g), ids, "generation " + std::to_string(g));
  }
  std::vector<std::pair<double, double>> rings;
  for (const size_t i : front)
    if (plotted(state.history[i], x, y)) rings.push_back({state.history[i].objectives[x], state.history[i].objectives[y]});
  svg.markers(rings, kFrontColour, {}, "final front", {7, true});
  // One swatch per generation (at most 10 shown), then what the ring and the line are.
  const int64_t shown = std::min<int64_t>(last_generation, 9);
  for (int64_t k = 0; k <= shown; ++k) {
    const int64_t g = shown > 0 ? k * last_generation / shown : 0;
    svg.legend("generation " + std::to_string(g), colour(g), plot::LegendMark::dot);
  }
  svg.legend("final front", kFrontColour, plot::LegendMark::ring);
  svg.legend("front in this plane", kFrontColour, plot::LegendMark::line);
  return svg.str();
}

}  // namespace tessera::search
