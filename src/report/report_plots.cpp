#include "report_plots.hpp"

#include <optional>
#include <set>

#include "tessera/plot/svg_plot.hpp"

namespace tessera::report {
namespace {

using Points = std::vector<std::pair<double, double>>;

constexpr int kWidth = 860, kHeight = 400;

/// One series per run: a value of each training window against `x`.
template <class X, class Y>
std::vector<Points> train_series(const std::vector<RunLog>& runs, X x, Y y) {
  std::vector<Points> series;
  for (const auto& run : runs) {
    Points points;
    for (const auto& p : run.train) points.push_back({x(run, p), y(p)});
    series.push_back(std::move(points));
  }
  return series;
}

/// One series per run: a value of each validation (not those right after a tournament)
/// against `x`; points where `y` has nothing are left out.
template <class X, class Y>
std::vector<Points> validation_series(const std::vector<RunLog>& runs, X x, Y y) {
  std::vector<Points> series;
  for (const auto& run : runs) {
    Points points;
    for (const auto& v : run.validation)
      if (!v.after_tournament)
        if (const auto value = y(v); value) points.push_back({x(run, v.step), *value});
    series.push_back(std::move(points));
  }
  return series;
}

std::vector<double> values(const std::vector<Points>& series, bool x) {
  std::vector<double> out;
  for (const auto& points : series)
    for (const auto& [a, b] : points) out.push_back(x ? a : b);
  return out;
}

bool empty(const std::vector<Points>& series) {
  for (const auto& points : series)
    if (!points.empty()) return false;
  return true;
}

/// A plot of solid series per run (their names the runs' labels) and, where given, dashed
/// ones with dots beside them; the y axis logarithmic where the values span over 20x.
std::string overlay(const std::string& title, const std::string& x_label, const std::string& y_label,
                    const std::vector<RunLog>& runs, const std::vector<Points>& solid,
                    const std::vector<Points>& dashed = {}, const std::string& dashed_name = "") {
  if (empty(solid) && empty(dashed)) return "";
  std::vector<double> xs = values(solid, true), ys = values(solid, false);
  for (double v : values(dashed, true)) xs.push_back(v);
  for (double v : values(dashed, false)) ys.push_back(v);
  plot::SvgPlot svg(title, plot::Axis::fitted(x_label, xs), plot::Axis::fitted(y_label, ys, true), kWidth, kHeight);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string colour = plot::SvgPlot::color(i), label = runs[i].label;
    if (i < solid.size() && !solid[i].empty()) {
      svg.line(solid[i], colour, false, label);
      svg.legend(label, colour);
    }
    if (i < dashed.size() && !dashed[i].empty()) {
      svg.line(dashed[i], colour, true, label + " " + dashed_name);
      svg.markers(dashed[i], colour, {}, label + " " + dashed_name + " points", {3.5, false});
      svg.legend(label + " " + dashed_name, colour, true);
    }
  }
  return svg.str();
}

double step_of(const RunLog&, const TrainPoint& p) { return static_cast<double>(p.step); }
double time_of(const RunLog&, const TrainPoint& p) { return p.elapsed_s; }
double step_at(const RunLog&, int64_t step) { return static_cast<double>(step); }
double time_at(const RunLog& run, int64_t step) { return run.elapsed_at(step); }

std::optional<double> validation_loss(const ValidationPoint& v) { return v.loss; }

/// The task metrics the runs' validations carry, without their baselines.
std::set<std::string> metric_names(const std::vector<RunLog>& runs) {
  std::set<std::string> names;
  for (const auto& run : runs)
    for (const auto& v : run.validation)
      for (const auto& [name, value] : v.metrics)
        if (name.rfind("baseline_", 0) != 0) names.insert(name);
  return names;
}

}  // namespace

std::string loss_by_step_svg(const std::vector<RunLog>& runs) {
  return overlay("Loss against step: training (solid, windowed mean) and validation (dashed)", "step", "loss", runs,
                 train_series(runs, step_of, [](const TrainPoint& p) { return p.loss; }),
                 validation_series(runs, step_at, validation_loss), "validation");
}

std::string loss_by_time_svg(const std::vector<RunLog>& runs) {
  return overlay("Loss against time since the run started", "seconds", "loss", runs,
                 train_series(runs, time_of, [](const TrainPoint& p) { return p.loss; }),
                 validation_series(runs, time_at, validation_loss), "validation");
}

std::vector<std::string> metric_svgs(const std::vector<RunLog>& runs) {
  std::vector<std::string> plots;
  for (const std::string& name : metric_names(runs)) {
    const auto metric = [&](const std::string& key) {
      return [key](const ValidationPoint& v) -> std::optional<double> {
        const auto it = v.metrics.find(key);
        return it == v.metrics.end() ? std::nullopt : std::optional<double>(it->second);
      };
    };
    plots.push_back(overlay("Validation " + name + " against step", "step", name, runs,
                            validation_series(runs, step_at, metric(name)),
                            validation_series(runs, step_at, metric("baseline_" + name)), "predicting the mean"));
  }
  return plots;
}

std::string throughput_svg(const std::vector<RunLog>& runs) {
  return overlay("Training throughput per window", "step", "samples/s", runs,
                 train_series(runs, step_of, [](const TrainPoint& p) { return p.samples_per_s; }));
}

std::string learning_rate_svg(const std::vector<RunLog>& runs) {
  return overlay("Learning rate", "step", "learning rate", runs,
                 train_series(runs, step_of, [](const TrainPoint& p) { return p.lr; }));
}

}  // namespace tessera::report
