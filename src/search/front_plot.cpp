#include "tessera/search/front_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tessera::search {
namespace {

/// Viridis-like colour of t in [0, 1], as "#rrggbb".
std::string colour(double t) {
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int k = std::min(3, static_cast<int>(t));
  const double f = t - k;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[k][0] + f * (stops[k + 1][0] - stops[k][0])),
                static_cast<int>(stops[k][1] + f * (stops[k + 1][1] - stops[k][1])),
                static_cast<int>(stops[k][2] + f * (stops[k + 1][2] - stops[k][2])));
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string front_svg(const SearchState& state, const std::vector<size_t>& front, size_t x, size_t y) {
  const double width = 680, height = 440, left = 80, right = 160, top = 30, bottom = 60;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  int64_t last_generation = 0;
  for (const auto& r : state.history) {
    last_generation = std::max(last_generation, r.generation);
    if (r.failed || !std::isfinite(r.objectives[x]) || !std::isfinite(r.objectives[y])) continue;
    x_lo = std::min(x_lo, r.objectives[x]);
    x_hi = std::max(x_hi, r.objectives[x]);
    y_lo = std::min(y_lo, r.objectives[y]);
    y_hi = std::max(y_hi, r.objectives[y]);
  }
  const std::string x_name = state.objectives[x], y_name = state.objectives[y];
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!(x_lo <= x_hi)) return s + "<text x=\"20\" y=\"40\">no candidate finished training</text>\n</svg>\n";
  const bool log_x = x_lo > 0 && x_hi / x_lo > 20.0;
  auto tx = [&](double v) { return log_x ? std::log(v) : v; };
  double a = tx(x_lo), b = tx(x_hi), c = y_lo, d = y_hi;
  if (b - a <= 0) a -= 0.5, b += 0.5;
  if (d - c <= 0) c -= 0.5, d += 0.5;
  const double pw = width - left - right, ph = height - top - bottom;
  auto px = [&](double v) { return left + (tx(v) - a) / (b - a) * pw; };
  auto py = [&](double v) { return top + ph - (v - c) / (d - c) * ph; };
  // Axes, with the extreme values as ticks.
  s += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
       "\" fill=\"none\" stroke=\"#444\"/>\n";
  s += "<text x=\"" + num(left) + "\" y=\"" + num(top + ph + 16) + "\">" + num(x_lo) + "</text>\n";
  s += "<text x=\"" + num(left + pw) + "\" y=\"" + num(top + ph + 16) + "\" text-anchor=\"end\">" + num(x_hi) +
       "</text>\n";
  s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(height - 15) + "\" text-anchor=\"middle\">" + x_name +
       (log_x ? " (log scale)" : "") + "</text>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + ph) + "\" text-anchor=\"end\">" + num(y_lo) + "</text>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + 10) + "\" text-anchor=\"end\">" + num(y_hi) + "</text>\n";
  s += "<text transform=\"translate(18," + num(top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" + y_name +
       "</text>\n";
  // The (x, y) Pareto front of every trained candidate as a staircase line, under the dots;
  // with more than two objectives the final front ringed below need not lie on it.
  std::vector<size_t> finished;
  std::vector<Objectives> plane;
  for (size_t i = 0; i < state.history.size(); ++i) {
    const auto& o = state.history[i].objectives;
    if (state.history[i].failed || !std::isfinite(o[x]) || !std::isfinite(o[y])) continue;
    finished.push_back(i);
    plane.push_back({o[x], o[y]});
  }
  std::vector<size_t> line;
  const auto fronts = non_dominated_sort(plane);
  if (!fronts.empty())
    for (const size_t k : fronts[0]) line.push_back(finished[k]);
  std::sort(line.begin(), line.end(), [&](size_t i, size_t j) {
    const auto &a = state.history[i].objectives, &b = state.history[j].objectives;
    return a[x] != b[x] ? a[x] < b[x] : a[y] < b[y];
  });
  s += "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"";
  for (size_t k = 0; k < line.size(); ++k) {
    const auto& o = state.history[line[k]].objectives;
    if (k > 0) s += num(px(o[x])) + "," + num(py(state.history[line[k - 1]].objectives[y])) + " ";
    s += num(px(o[x])) + "," + num(py(o[y])) + " ";
  }
  s += "\"/>\n";
  std::vector<size_t> sorted;
  for (const size_t i : front)
    if (!state.history[i].failed && std::isfinite(state.history[i].objectives[x]) &&
        std::isfinite(state.history[i].objectives[y]))
      sorted.push_back(i);
  for (const auto& r : state.history) {
    if (r.failed || !std::isfinite(r.objectives[x]) || !std::isfinite(r.objectives[y])) continue;
    const double t = last_generation > 0 ? static_cast<double>(r.generation) / static_cast<double>(last_generation) : 0;
    s += "<circle cx=\"" + num(px(r.objectives[x])) + "\" cy=\"" + num(py(r.objectives[y])) + "\" r=\"4\" fill=\"" +
         colour(t) + "\"><title>" + r.id + "</title></circle>\n";
  }
  for (const size_t i : sorted)
    s += "<circle cx=\"" + num(px(state.history[i].objectives[x])) + "\" cy=\"" +
         num(py(state.history[i].objectives[y])) + "\" r=\"7\" fill=\"none\" stroke=\"#d62728\"/>\n";
  // Legend: one swatch per generation (at most 10 shown).
  const int64_t shown = std::min<int64_t>(last_generation, 9);
  for (int64_t g = 0; g <= shown; ++g) {
    const int64_t gen = shown > 0 ? g * last_generation / shown : 0;
    const double t = last_generation > 0 ? static_cast<double>(gen) / static_cast<double>(last_generation) : 0;
    const double ly = top + 10 + static_cast<double>(g) * 18;
    s += "<circle cx=\"" + num(width - right + 20) + "\" cy=\"" + num(ly) + "\" r=\"5\" fill=\"" + colour(t) + "\"/>";
    s += "<text x=\"" + num(width - right + 30) + "\" y=\"" + num(ly + 4) + "\">generation " + std::to_string(gen) +
         "</text>\n";
  }
  s += "<text x=\"" + num(width - right + 14) + "\" y=\"" + num(top + 10 + static_cast<double>(shown + 1) * 18 + 4) +
       "\" fill=\"#d62728\">o final front</text>\n";
  s += "<text x=\"" + num(width - right + 14) + "\" y=\"" + num(top + 10 + static_cast<double>(shown + 2) * 18 + 4) +
       "\" fill=\"#d62728\">&#8212; front in this plane</text>\n";
  return s + "</svg>\n";
}

}  // namespace tessera::search
