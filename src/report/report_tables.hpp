#pragma once
#include <string>
#include <vector>

#include "tessera/report/run_log.hpp"

namespace tessera::report {

/// The HTML tables of a run report; each returns "" when its runs have nothing to show.
/// One row per run: precision, ranks, batch, steps, throughput, losses, task metrics, memory.
std::string runs_table(const std::vector<RunLog>& runs);
/// What each run trained on and how: data set, optimizer, schedule.
std::string setup_table(const std::vector<RunLog>& runs);
/// A run's per-layer profile (`--profile`): forward and backward time per call and the share
/// of the step, with a bar; then the regions outside the layers (data, optimizer, ...).
std::string profile_table(const RunLog& run);
/// A run's layers with their output, parameters, backend, precision and distribution, and
/// whether the planner chose the layout.
std::string layout_table(const RunLog& run);
/// Where each rank of a run ran: host, node, CPUs, NUMA domains.
std::string placement_table(const RunLog& run);
/// A population's tournaments (round, step, pairs and winners) and its final losses.
std::string population_table(const RunLog& run);

/// `text` escaped for HTML.
std::string html(const std::string& text);

}  // namespace tessera::report
