#pragma once
#include <string>
#include <vector>

#include "tessera/report/run_log.hpp"

namespace tessera::report {

/// The metrics logs a report of `paths` shows: each path read, followed by the logs its
/// population's other trainers wrote beside it (population_logs), labelled "<label> trainer t".
/// Throws what RunLog::read throws, naming the file.
std::vector<RunLog> read_runs(const std::vector<std::string>& paths);

/// A run report: one self-contained HTML page (inline SVG and CSS; no script, font or file
/// fetched) from one or more metrics logs, overlaid where they share a plot. Sections: the
/// runs; loss against step and against time; each task metric; throughput and learning
/// rate; per run, the per-layer profile (where `--profile` ran), the layout (given or
/// planned) and the rank placement; a population's tournaments; the setup.
/// Each section is an element with an id (runs, loss, metrics, speed, profile, layout,
/// placement, population, setup), so a check can find it.
std::string run_report_html(const std::vector<RunLog>& runs, const std::string& title);

}  // namespace tessera::report
