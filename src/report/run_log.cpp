#include "tessera/report/run_log.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/train/metrics_log.hpp"

namespace tessera::report {
namespace {

double number(const nlohmann::json& record, const char* key, double fallback = 0.0) {
  const auto it = record.find(key);
  return it != record.end() && it->is_number() ? it->get<double>() : fallback;
}

int64_t integer(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_number() ? it->get<int64_t>() : 0;
}

TrainPoint train_point(const nlohmann::json& r) {
  return {integer(r, "step"),         integer(r, "epoch"),     number(r, "loss"), number(r, "lr"),
          number(r, "samples_per_s"), number(r, "elapsed_s"), number(r, "loss_scale", -1)};
}

ValidationPoint validation_point(const nlohmann::json& r) {
  ValidationPoint v{integer(r, "step"), integer(r, "epoch"), number(r, "loss"), {}, false};
  for (const auto& [key, value] : r.items()) {
    if (key == "after_tournament") v.after_tournament = value.is_boolean() && value.get<bool>();
    if (key == "step" || key == "epoch" || key == "loss" || !value.is_number()) continue;
    v.metrics[key] = value.get<double>();
  }
  return v;
}

/// Files the record where its event says; false for a record that is not one of a log.
bool take(RunLog& log, const nlohmann::json& r) {
  if (!r.is_object() || !r.contains("event") || !r["event"].is_string()) return false;
  const std::string event = r["event"];
  if (event == "start") log.start = r;
  else if (event == "end") log.end = r;
  else if (event == "plan") log.plan = r;
  else if (event == "profile") log.profile = r;
  else if (event == "population") log.population = r;
  else if (event == "tournament") log.tournaments.push_back(r);
  else if (event == "train") log.train.push_back(train_point(r));
  else if (event == "validation") log.validation.push_back(validation_point(r));
  else log.other.push_back(r);
  return true;
}

}  // namespace

RunLog RunLog::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read the metrics log '" + path + "'");
  RunLog log;
  log.path = path;
  log.label = std::filesystem::path(path).stem().string();  // "runs/a.metrics.jsonl" -> "a.metrics"
  std::string line;
  int64_t line_number = 0, records = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    const bool last = in.peek() == std::char_traits<char>::eof();
    if (record.is_discarded() && last && records > 0) {
      log::warn(path + ":" + std::to_string(line_number) + ": the last line is cut short (a run still writing?); skipped");
      break;
    }
    if (record.is_discarded() || !take(log, record))
      throw Error(path + ":" + std::to_string(line_number) + ": not a record of a Tessera metrics log (a JSON object " +
                  "with an \"event\" on each line, as `tessera train --metrics` writes)");
    ++records;
  }
  if (records == 0) throw Error("'" + path + "' holds no record: is it a metrics log of `tessera train --metrics`?");
  return log;
}

double RunLog::elapsed_at(int64_t step) const {
  if (train.empty() || step <= 0) return 0.0;
  const auto after = std::lower_bound(train.begin(), train.end(), step,
                                      [](const TrainPoint& p, int64_t s) { return p.step < s; });
  if (after == train.end()) return train.back().elapsed_s;
  if (after == train.begin()) return after->elapsed_s * static_cast<double>(step) / static_cast<double>(after->step);
  const auto before = after - 1;
  const double f = static_cast<double>(step - before->step) / static_cast<double>(after->step - before->step);
  return before->elapsed_s + f * (after->elapsed_s - before->elapsed_s);
}

std::vector<std::string> population_logs(const std::string& path) {
  std::vector<std::string> logs;
  for (int t = 1;; ++t) {
    const std::string candidate = train::log_beside(path, ".trainer" + std::to_string(t));
    if (!std::filesystem::exists(candidate)) break;
    logs.push_back(candidate);
  }
  return logs;
}

}  // namespace tessera::report
