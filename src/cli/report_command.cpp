#include <filesystem>

#include "commands.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/report/run_report.hpp"

namespace tessera::cli {

CLI::App* add_report_command(CLI::App& app, ReportArgs& a) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write a run report: one self-contained HTML page (inline SVG; no script, nothing fetched) from one or more "
      "metrics logs of `tessera train --metrics`, overlaid: loss against step and time, task metrics, throughput, "
      "learning rate, the per-layer profile (--profile), the layout and rank placement, a population's "
      "tournaments. A population's other trainers' logs beside a log are read with it.");
  cmd->add_option("logs", a.logs, "Metrics logs (JSON lines)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a.output, "The HTML file to write (default: the first log's name with .html)");
  cmd->add_option("--title", a.title, "The page's title")->capture_default_str();
  return cmd;
}

int run_report(const ReportArgs& a) {
  // Reading logs is one process's work; under mpirun only the first rank writes.
  if (parallel::Communicator::world().rank() != 0) return 0;
  // "runs/a.metrics.jsonl" -> "runs/a.metrics.html".
  const std::string output =
      a.output.empty() ? std::filesystem::path(a.logs.front()).replace_extension(".html").string() : a.output;
  require_writable_location(output, a.output.empty() ? "the report (beside the first log)" : "--output (the report)");
  const auto runs = report::read_runs(a.logs);
  write_text_atomically(output, report::run_report_html(runs, a.title));
  log::info("wrote " + output + " (" + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") + ")");
  return 0;
}

}  // namespace tessera::cli
