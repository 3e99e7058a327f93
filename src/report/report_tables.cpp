#include "report_tables.hpp"

#include <algorithm>
#include <map>

#include "tessera/core/format.hpp"
#include "tessera/plot/svg_plot.hpp"

namespace tessera::report {
namespace {

using Row = std::vector<std::string>;

/// A table with a header row; `numeric` columns align right. Cells are HTML already.
std::string table(const Row& header, const std::vector<Row>& rows, const std::vector<size_t>& numeric = {}) {
  const auto cell = [&](const char* tag, size_t column, const std::string& text) {
    const bool right = std::find(numeric.begin(), numeric.end(), column) != numeric.end();
    return std::string("<") + tag + (right ? " class=\"num\"" : "") + ">" + text + "</" + tag + ">";
  };
  std::string s = "<table>\n<tr>";
  for (size_t c = 0; c < header.size(); ++c) s += cell("th", c, html(header[c]));
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) s += cell("td", c, row[c]);
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string text(const nlohmann::json& record, const char* key) {
  const auto it = record.is_object() ? record.find(key) : record.end();
  if (it == record.end() || it->is_null()) return "";
  return html(it->is_string() ? it->get<std::string>() : it->dump());
}

std::string number(double v, int digits = 4) { return html(format("%.*g", digits, v)); }

/// "0.0311 (10.8x below predicting the mean)": a loss against the mean predictor's.
std::string loss_against_baseline(const ValidationPoint& v) {
  std::string s = number(v.loss);
  const auto it = v.metrics.find("baseline_loss");
  if (it == v.metrics.end() || it->second <= 0) return s;
  return s + (v.loss <= it->second ? " (" + fixed(it->second / std::max(v.loss, 1e-12), 1) + "&times; below"
                                   : " (" + fixed(v.loss / it->second, 1) + "&times; above") +
         " predicting the mean)";
}

/// The last validation's task metrics, "mae 0.12, iou 0.8".
std::string last_metrics(const RunLog& run) {
  if (run.validation.empty()) return "";
  std::string s;
  for (const auto& [name, value] : run.validation.back().metrics)
    if (name.rfind("baseline_", 0) != 0) s += (s.empty() ? "" : ", ") + html(name) + " " + number(value);
  return s;
}

Row run_row(const RunLog& run) {
  const nlohmann::json& end = run.end;
  const std::string loss = run.train.empty() ? ""
                                             : number(run.train.front().loss) + " &rarr; " + number(run.train.back().loss);
  std::string status = end.is_null() ? "no end record (still running, or killed)" : "finished";
  if (end.is_object() && end.contains("stopped_by")) status = "stopped by " + text(end, "stopped_by");
  return {"<b>" + html(run.label) + "</b>",
          text(run.start, "precision"),
          text(end.is_null() ? run.start : end, "ranks"),
          text(run.start, "batch_size"),
          end.is_null() ? (run.train.empty() ? "" : std::to_string(run.train.back().step)) : text(end, "steps"),
          end.is_null() ? "" : number(end.value("samples_per_s", 0.0), 5),
          loss,
          run.validation.empty() ? "" : loss_against_baseline(run.validation.back()),
          last_metrics(run),
          end.is_null() ? "" : number(end.value("peak_rss_mb_max_rank", 0.0), 5),
          end.is_null() ? "" : number(end.value("elapsed_s", 0.0), 4),
          status};
}

}  // namespace

std::string html(const std::string& text) { return plot::xml_escape(text); }

std::string runs_table(const std::vector<RunLog>& runs) {
  std::vector<Row> rows;
  for (const auto& run : runs) rows.push_back(run_row(run));
  return table({"run", "precision", "ranks", "batch", "steps", "samples/s", "training loss", "validation loss",
                "task metrics", "peak RSS MiB", "seconds", "status"},
               rows, {2, 3, 4, 5, 9, 10});
}

std::string setup_table(const std::vector<RunLog>& runs) {
  std::vector<Row> rows;
  for (const auto& run : runs)
    if (run.start.is_object())
      rows.push_back({html(run.label), text(run.start, "dataset"), text(run.start, "optimizer"),
                      text(run.start, "schedule"), text(run.start, "threads")});
  return rows.empty() ? "" : table({"run", "data", "optimizer", "schedule", "threads per rank"}, rows, {4});
}

std::string profile_table(const RunLog& run) {
  if (!run.profile.is_object() || !run.profile.contains("regions")) return "";
  struct Times {
    double forward_s = 0, backward_s = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Times> layers;
  std::vector<std::string> order;  // layers in the order the log names them
  std::vector<Row> others;
  const nlohmann::json& regions = run.profile["regions"];
  const double step_s = regions.contains("step") ? regions["step"].value("seconds", 0.0) : 0.0;
  for (const auto& [name, r] : regions.items()) {
    const double seconds = r.value("seconds", 0.0);
    const int64_t calls = r.value("calls", int64_t{0});
    const size_t slash = name.find('/');
    if (slash == std::string::npos) {
      if (name != "step") others.push_back({html(name), number(1e3 * seconds / std::max<int64_t>(calls, 1)), "", ""});
      continue;
    }
    const std::string layer = name.substr(slash + 1);
    if (!layers.count(layer)) order.push_back(layer);
    Times& t = layers[layer];
    (name.rfind("forward", 0) == 0 ? t.forward_s : t.backward_s) += seconds;
    t.calls = std::max(t.calls, calls);
  }
  std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return layers[a].forward_s + layers[a].backward_s > layers[b].forward_s + layers[b].backward_s;
  });
  std::vector<Row> rows;
  for (const auto& layer : order) {
    const Times& t = layers[layer];
    const double share = step_s > 0 ? (t.forward_s + t.backward_s) / step_s : 0.0;
    const double calls = static_cast<double>(std::max<int64_t>(t.calls, 1));
    rows.push_back({html(layer), number(1e3 * t.forward_s / calls), number(1e3 * t.backward_s / calls),
                    fixed(100 * share, 1) + "%",
                    "<span class=\"bar\" style=\"width:" + fixed(std::min(1.0, share) * 240, 0) + "px\"></span>"});
  }
  for (auto& row : others) rows.push_back({row[0], row[1], "", "", ""});
  return table({"layer or region", "forward ms/call", "backward ms/call", "share of the step", ""}, rows, {1, 2, 3});
}

std::string layout_table(const RunLog& run) {
  if (!run.start.is_object() || !run.start.contains("layers")) return "";
  std::vector<Row> rows;
  for (const auto& layer : run.start["layers"]) {
    std::string output;
    for (const auto& d : layer.value("output_per_sample", nlohmann::json::array()))
      output += (output.empty() ? "" : ", ") + d.dump();
    rows.push_back({text(layer, "name"), text(layer, "type"), "[" + output + "]", text(layer, "parameters"),
                    text(layer, "backend"), text(layer, "precision"),
                    layer.contains("distribution") ? text(layer, "distribution") : "not split"});
  }
  std::string s;
  if (run.plan.is_object())
    s = "<p>Layout chosen by the planner (<code>\"distribution\": \"auto\"</code>) for " + text(run.plan, "ranks") +
        " ranks: predicted step " + number(run.plan.value("fastest_found_s", 0.0)) + " s, " +
        text(run.plan, "candidates") + " candidates.</p>\n";
  else
    s = "<p>Layout as the config gave it.</p>\n";
  return s + table({"layer", "type", "output per sample", "parameters", "backend", "precision", "distribution"},
                   rows, {3});
}

std::string placement_table(const RunLog& run) {
  if (!run.start.is_object() || !run.start.contains("placement")) return "";
  std::vector<Row> rows;
  for (const auto& p : run.start["placement"])
    rows.push_back({text(p, "rank"), text(p, "host"), text(p, "node"), text(p, "cpus"), text(p, "numa")});
  return table({"rank", "host", "node (its first rank)", "CPUs", "NUMA domains"}, rows, {0, 2});
}

std::string population_table(const RunLog& run) {
  if (run.tournaments.empty() && !run.population.is_object()) return "";
  std::vector<Row> rows;
  for (const auto& t : run.tournaments) {
    std::string metrics, pairs;
    for (const auto& m : t.value("metrics", nlohmann::json::array()))
      metrics += (metrics.empty() ? "" : ", ") + (m.is_number() ? number(m.get<double>()) : std::string("none"));
    for (const auto& p : t.value("pairs", nlohmann::json::array()))
      if (p.contains("trainers") && p["trainers"].size() == 2)
        pairs += (pairs.empty() ? "" : "; ") + html(p["trainers"][0].dump()) + " vs " + html(p["trainers"][1].dump()) +
                 ": " + text(p, "winner") + " won";
    rows.push_back({text(t, "round"), text(t, "step"), text(t, "selection"), metrics, pairs, number(t.value("seconds", 0.0))});
  }
  std::string s = rows.empty() ? "" : table({"round", "step", "selection", "metric per trainer", "pairs", "seconds"},
                                            rows, {0, 1, 5});
  if (run.population.is_object()) {
    const nlohmann::json best = run.population.value("best_trainer", nlohmann::json());
    std::string losses;
    for (const auto& loss : run.population.value("validation_loss", nlohmann::json::array()))
      losses += (losses.empty() ? "" : ", ") + (loss.is_number() ? number(loss.get<double>()) : std::string("none"));
    s += "<p>Final validation loss per trainer: " + losses + "; best trainer: " +
         (best.is_null() ? "none (no validation figure to compare)" : html(best.dump())) + ".</p>\n";
  }
  return s;
}

}  // namespace tessera::report
