#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::report {

/// One training window of a metrics log (a `train` record).
struct TrainPoint {
  int64_t step = 0, epoch = 0;
  double loss = 0, lr = 0, samples_per_s = 0, elapsed_s = 0;
  double loss_scale = -1;  // -1: no loss scaling
};

/// One validation of a metrics log: its loss and every task metric it carries (mae, iou,
/// accuracy, ...; `baseline_<m>` is what predicting the training targets' mean scores).
struct ValidationPoint {
  int64_t step = 0, epoch = 0;
  double loss = 0;
  std::map<std::string, double> metrics;
  bool after_tournament = false;
};

/// A metrics log as `tessera train --metrics` writes it (JSON lines: start, train,
/// validation, plan, profile, tournament, population, end), read back for `tessera report`.
/// Records of kinds it does not know are kept in `other`, so a newer log still reads.
struct RunLog {
  std::string path, label;
  nlohmann::json start, end, plan, profile, population;  // null where the run wrote none
  std::vector<TrainPoint> train;
  std::vector<ValidationPoint> validation;
  std::vector<nlohmann::json> tournaments, other;

  /// Reads `path`. Throws IoError when it cannot be read, and Error naming the file and line
  /// when a line is not a JSON object with an "event", when a field the report reads has the
  /// wrong type (`"loss": "x"`), or when the file holds no record. A
  /// last line cut short (a run still writing, or killed mid-write) is skipped with a warning.
  static RunLog read(const std::string& path);

  /// Seconds since the run started at `step`, from the training windows around it (0 before
  /// the first window, the last window's time after it).
  double elapsed_at(int64_t step) const;
};

/// The logs a population run writes beside its first trainer's `path`: `<stem>.trainer<t><ext>`
/// for t = 1, 2, ... while they exist.
std::vector<std::string> population_logs(const std::string& path);

}  // namespace tessera::report
