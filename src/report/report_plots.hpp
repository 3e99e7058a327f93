#pragma once
#include <string>
#include <vector>

#include "tessera/report/run_log.hpp"

namespace tessera::report {

/// The plots of a run report, each an SVG string (empty when no run has the data): every run
/// a colour of its own, overlaid.
/// Training loss (solid) and validation loss (dashed, with dots) against the step.
std::string loss_by_step_svg(const std::vector<RunLog>& runs);
/// The same against seconds since each run started.
std::string loss_by_time_svg(const std::vector<RunLog>& runs);
/// One plot per task metric the validations carry (mae, iou, accuracy, ...), with what
/// predicting the mean scores (`baseline_<m>`) as a dotted reference.
std::vector<std::string> metric_svgs(const std::vector<RunLog>& runs);
/// Samples per second of each training window against the step.
std::string throughput_svg(const std::vector<RunLog>& runs);
/// The learning rate against the step.
std::string learning_rate_svg(const std::vector<RunLog>& runs);

}  // namespace tessera::report
