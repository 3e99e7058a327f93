#include "tessera/search/front_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/format.hpp"

namespace tessera::search {
namespace {

/// Viridis-like colour of t in [0, 1], as "#rrggbb".
std::string colour(double t) {
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int k = std::min(3, static_cast<int>(t));
  const double f = t - k;
  const auto channel = [&](int c) { return static_cast<int>(stops[k][c] + f * (stops[k + 1][c] - stops[k][c])); };
  return format("#%02x%02x%02x", channel(0), channel(1), channel(2));
}

std::string num(double v) { return format("%.4g", v); }

const double kWidth = 680, kHeight = 440, kLeft = 80, kRight = 160, kTop = 30, kBottom = 60;

/// Whether a candidate has a dot: it trained, and both its objectives are finite.
bool plotted(const CandidateRecord& r, size_t x, size_t y) {
  return !r.failed && std::isfinite(r.objectives[x]) && std::isfinite(r.objectives[y]);
}

/// The plot's area and how objective values map onto it: x logarithmic when its values span
/// more than a factor of 20; an empty range widened to one around its value.
struct Frame {
  size_t x, y;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  int64_t last_generation = 0;
  bool log_x = false;
  double a = 0, b = 0, c = 0, d = 0;  // the ranges of tx(x) and y drawn
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;

  Frame(const SearchState& state, size_t x, size_t y) : x(x), y(y) {
    for (const auto& r : state.history) {
      last_generation = std::max(last_generation, r.generation);
      if (!plotted(r, x, y)) continue;
      x_lo = std::min(x_lo, r.objectives[x]);
      x_hi = std::max(x_hi, r.objectives[x]);
      y_lo = std::min(y_lo, r.objectives[y]);
      y_hi = std::max(y_hi, r.objectives[y]);
    }
    if (empty()) return;
    log_x = x_lo > 0 && x_hi / x_lo > 20.0;
    a = tx(x_lo), b = tx(x_hi), c = y_lo, d = y_hi;
    if (b - a <= 0) a -= 0.5, b += 0.5;
    if (d - c <= 0) c -= 0.5, d += 0.5;
  }
  bool empty() const { return !(x_lo <= x_hi); }
  double tx(double v) const { return log_x ? std::log(v) : v; }
  double px(double v) const { return kLeft + (tx(v) - a) / (b - a) * pw; }
  double py(double v) const { return kTop + ph - (v - c) / (d - c) * ph; }
  /// A generation's colour: the first violet, the last yellow.
  std::string generation_colour(int64_t generation) const {
    return colour(last_generation > 0 ? static_cast<double>(generation) / static_cast<double>(last_generation) : 0);
  }
};

/// The axes' box, with the extreme values as ticks, and the objectives' names.
std::string axes(const Frame& f, const std::string& x_name, const std::string& y_name) {
  const double left = kLeft, top = kTop, pw = f.pw, ph = f.ph;
  std::string s = "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
                  "\" fill=\"none\" stroke=\"#444\"/>\n";
  s += "<text x=\"" + num(left) + "\" y=\"" + num(top + ph + 16) + "\">" + num(f.x_lo) + "</text>\n";
  s += "<text x=\"" + num(left + pw) + "\" y=\"" + num(top + ph + 16) + "\" text-anchor=\"end\">" + num(f.x_hi) +
       "</text>\n";
  s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(kHeight - 15) + "\" text-anchor=\"middle\">" + x_name +
       (f.log_x ? " (log scale)" : "") + "</text>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + ph) + "\" text-anchor=\"end\">" + num(f.y_lo) + "</text>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + 10) + "\" text-anchor=\"end\">" + num(f.y_hi) + "</text>\n";
  s += "<text transform=\"translate(18," + num(top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" + y_name +
       "</text>\n";
  return s;
}

/// The (x, y) Pareto front of every trained candidate as a staircase line, under the dots;
/// with more than two objectives the final front ringed need not lie on it.
std::string front_line(const SearchState& state, const Frame& f) {
  const size_t x = f.x, y = f.y;
  std::vector<size_t> finished;
  std::vector<Objectives> plane;
  for (size_t i = 0; i < state.history.size(); ++i) {
    if (!plotted(state.history[i], x, y)) continue;
    finished.push_back(i);
    plane.push_back({state.history[i].objectives[x], state.history[i].objectives[y]});
  }
  std::vector<size_t> line;
  const auto fronts = non_dominated_sort(plane);
  if (!fronts.empty())
    for (const size_t k : fronts[0]) line.push_back(finished[k]);
  std::sort(line.begin(), line.end(), [&](size_t i, size_t j) {
    const auto &a = state.history[i].objectives, &b = state.history[j].objectives;
    return a[x] != b[x] ? a[x] < b[x] : a[y] < b[y];
  });
  std::string s = "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"";
  for (size_t k = 0; k < line.size(); ++k) {
    const auto& o = state.history[line[k]].objectives;
    if (k > 0) s += num(f.px(o[x])) + "," + num(f.py(state.history[line[k - 1]].objectives[y])) + " ";
    s += num(f.px(o[x])) + "," + num(f.py(o[y])) + " ";
  }
  return s + "\"/>\n";
}

/// Every trained candidate as a dot coloured by its generation, then the final front's rings.
std::string dots(const SearchState& state, const std::vector<size_t>& front, const Frame& f) {
  const size_t x = f.x, y = f.y;
  std::string s;
  for (const auto& r : state.history) {
    if (!plotted(r, x, y)) continue;
    s += "<circle cx=\"" + num(f.px(r.objectives[x])) + "\" cy=\"" + num(f.py(r.objectives[y])) + "\" r=\"4\" fill=\"" +
         f.generation_colour(r.generation) + "\"><title>" + r.id + "</title></circle>\n";
  }
  for (const size_t i : front)
    if (plotted(state.history[i], x, y))
      s += "<circle cx=\"" + num(f.px(state.history[i].objectives[x])) + "\" cy=\"" +
           num(f.py(state.history[i].objectives[y])) + "\" r=\"7\" fill=\"none\" stroke=\"#d62728\"/>\n";
  return s;
}

/// One swatch per generation (at most 10 shown), and what the ring and the line are.
std::string legend(const Frame& f) {
  const int64_t last = f.last_generation, shown = std::min<int64_t>(last, 9);
  const double at = kWidth - kRight;
  std::string s;
  for (int64_t g = 0; g <= shown; ++g) {
    const int64_t gen = shown > 0 ? g * last / shown : 0;
    const double ly = kTop + 10 + static_cast<double>(g) * 18;
    s += "<circle cx=\"" + num(at + 20) + "\" cy=\"" + num(ly) + "\" r=\"5\" fill=\"" + f.generation_colour(gen) +
         "\"/>";
    s += "<text x=\"" + num(at + 30) + "\" y=\"" + num(ly + 4) + "\">generation " + std::to_string(gen) + "</text>\n";
  }
  s += "<text x=\"" + num(at + 14) + "\" y=\"" + num(kTop + 10 + static_cast<double>(shown + 1) * 18 + 4) +
       "\" fill=\"#d62728\">o final front</text>\n";
  s += "<text x=\"" + num(at + 14) + "\" y=\"" + num(kTop + 10 + static_cast<double>(shown + 2) * 18 + 4) +
       "\" fill=\"#d62728\">&#8212; front in this plane</text>\n";
  return s;
}

}  // namespace

std::string front_svg(const SearchState& state, const std::vector<size_t>& front, size_t x, size_t y) {
  const Frame frame(state, x, y);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
                  "fill=\"white\"/>\n";
  if (frame.empty()) return s + "<text x=\"20\" y=\"40\">no candidate finished training</text>\n</svg>\n";
  s += axes(frame, state.objectives[x], state.objectives[y]);
  s += front_line(state, frame);
  s += dots(state, front, frame);
  return s + legend(frame) + "</svg>\n";
}

}  // namespace tessera::search
