#include "tessera/report/run_report.hpp"

#include <algorithm>

#include "report_plots.hpp"
#include "report_tables.hpp"
#include "tessera/build_info.hpp"

namespace tessera::report {
namespace {

const char* const kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:10px;background:#1f77b4}.plots svg{display:block;margin:12px 0;width:100%;height:auto}
.note{color:#666;font-size:13px})";

std::string section(const std::string& id, const std::string& heading, const std::string& body) {
  if (body.empty()) return "";
  return "<section id=\"" + id + "\">\n<h2>" + html(heading) + "</h2>\n" + body + "</section>\n";
}

/// One sub-heading and table per run that has `what`; with one run, no sub-heading. A table
/// the same as an earlier run's (a population's trainers share a layout) is named, not repeated.
template <class Table>
std::string per_run(const std::vector<RunLog>& runs, Table table) {
  std::string s;
  std::vector<std::pair<std::string, std::string>> shown;  // table, run label
  for (const auto& run : runs) {
    const std::string t = table(run);
    if (t.empty()) continue;
    if (runs.size() > 1) s += "<h3>" + html(run.label) + "</h3>\n";
    const auto same = std::find_if(shown.begin(), shown.end(), [&](const auto& p) { return p.first == t; });
    s += same == shown.end() ? t : "<p>The same as " + html(same->second) + ".</p>\n";
    if (same == shown.end()) shown.push_back({t, run.label});
  }
  return s;
}

std::string plots(const std::vector<std::string>& svgs) {
  std::string s;
  for (const auto& svg : svgs) s += svg;
  return s.empty() ? "" : "<div class=\"plots\">\n" + s + "</div>\n";
}

}  // namespace

std::vector<RunLog> read_runs(const std::vector<std::string>& paths) {
  std::vector<RunLog> runs;
  for (const auto& path : paths) {
    runs.push_back(RunLog::read(path));
    const std::vector<std::string> others = population_logs(path);
    if (others.empty()) continue;
    const std::string label = runs.back().label;
    runs.back().label = label + " trainer 0";
    for (size_t t = 0; t < others.size(); ++t) {
      runs.push_back(RunLog::read(others[t]));
      runs.back().label = label + " trainer " + std::to_string(t + 1);
    }
  }
  return runs;
}

std::string run_report_html(const std::vector<RunLog>& runs, const std::string& title) {
  std::string files;
  for (const auto& run : runs) files += (files.empty() ? "" : ", ") + html(run.path);
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html(title) +
                  "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + html(title) + "</h1>\n" +
                  "<p class=\"note\">Written by tessera " + html(TESSERA_VERSION) + " from " + files + ".</p>\n";
  s += section("runs", "Runs", runs_table(runs));
  s += section("loss", "Loss", plots({loss_by_step_svg(runs), loss_by_time_svg(runs)}));
  s += section("metrics", "Task metrics", plots(metric_svgs(runs)));
  s += section("speed", "Throughput and learning rate", plots({throughput_svg(runs), learning_rate_svg(runs)}));
  s += section("profile", "Per-layer profile (--profile)", per_run(runs, profile_table));
  s += section("layout", "Layout", per_run(runs, layout_table));
  s += section("placement", "Placement", per_run(runs, placement_table));
  s += section("population", "Population (LTFB)", per_run(runs, population_table));
  s += section("setup", "Setup", setup_table(runs));
  return s + "</body>\n</html>\n";
}

}  // namespace tessera::report
