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
  return {integer(r, "step"),         integer(r, "epoch"),    number(r, "loss"),          number(r, "lr"),
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

/// What a field the report reads must hold.
enum class Kind { integer, number, boolean, object, array, numbers, objects };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::integer: return "an integer";
    case Kind::number: return "a number";
    case Kind::boolean: return "true or false";
    case Kind::object: return "an object";
    case Kind::array: return "an array";
    case Kind::numbers: return "an array of numbers (or null)";
    case Kind::objects: return "an array of objects";
  }
  return "";
}

bool holds(const nlohmann::json& v, Kind k) {
  switch (k) {
    case Kind::integer:
      // 2^63 and above are kept unsigned by the parser and would wrap negative when read.
      return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{1} << 62);
    case Kind::number: return v.is_number();
    case Kind::boolean: return v.is_boolean();
    case Kind::object: return v.is_object();
    case Kind::array: return v.is_array();
    case Kind::numbers:
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const auto& x) { return x.is_number() || x.is_null(); });
    case Kind::objects:
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& x) { return x.is_object(); });
  }
  return false;
}

/// The fields of each event that the report reads, with what they must hold when present.
/// Checked when a log is read, so a log with a field of the wrong type is refused at its line
/// instead of failing later in the JSON library, far from the file.
struct Field {
  const char* event;
  const char* key;
  Kind kind;
};
const Field kFields[] = {
    {"train", "step", Kind::integer},
    {"train", "epoch", Kind::integer},
    {"train", "loss", Kind::number},
    {"train", "lr", Kind::number},
    {"train", "samples_per_s", Kind::number},
    {"train", "elapsed_s", Kind::number},
    {"train", "loss_scale", Kind::number},
    {"validation", "step", Kind::integer},
    {"validation", "epoch", Kind::integer},
    {"validation", "loss", Kind::number},
    {"validation", "after_tournament", Kind::boolean},
    {"end", "samples_per_s", Kind::number},
    {"end", "peak_rss_mb_max_rank", Kind::number},
    {"end", "elapsed_s", Kind::number},
    {"plan", "fastest_found_s", Kind::number},
    {"profile", "regions", Kind::object},
    {"start", "layers", Kind::objects},
    {"start", "placement", Kind::objects},
    {"tournament", "metrics", Kind::numbers},
    {"tournament", "pairs", Kind::objects},
    {"tournament", "seconds", Kind::number},
    {"population", "validation_loss", Kind::numbers},
};

/// Why record `r` of `event` cannot be read, or "".
std::string field_problem(const std::string& event, const nlohmann::json& r) {
  auto wrong = [&](const std::string& field, Kind k, const nlohmann::json& v) {
    std::string got = v.dump();
    if (got.size() > 40) got = got.substr(0, 40) + "...";
    return "the \"" + event + "\" record's " + field + " should be " + kind_name(k) + ", got " + got;
  };
  for (const Field& f : kFields) {
    if (event != f.event) continue;
    const auto it = r.find(f.key);
    if (it != r.end() && !holds(*it, f.kind)) return wrong(std::string("\"") + f.key + "\"", f.kind, *it);
  }
  if (event == "profile" && r.contains("regions"))
    for (const auto& [name, region] : r["regions"].items()) {
      const std::string where = "\"regions\".\"" + name + "\"";
      if (!region.is_object()) return wrong(where, Kind::object, region);
      for (const auto& [key, kind] : {std::pair<const char*, Kind>{"seconds", Kind::number}, {"calls", Kind::integer}})
        if (region.contains(key) && !holds(region[key], kind))
          return wrong(where + ".\"" + key + "\"", kind, region[key]);
    }
  if (event == "start" && r.contains("layers"))
    for (const auto& layer : r["layers"])
      if (layer.contains("output_per_sample") && !holds(layer["output_per_sample"], Kind::array))
        return wrong("layer's \"output_per_sample\"", Kind::array, layer["output_per_sample"]);
  if (event == "tournament" && r.contains("pairs"))
    for (const auto& pair : r["pairs"])
      if (pair.contains("trainers") && !holds(pair["trainers"], Kind::array))
        return wrong("pair's \"trainers\"", Kind::array, pair["trainers"]);
  return "";
}

/// Files the record where its event says; false for a record that is not one of a log.
bool take(RunLog& log, const nlohmann::json& r) {
  if (!r.is_object() || !r.contains("event") || !r["event"].is_string()) return false;
  const std::string event = r["event"];
  if (event == "start")
    log.start = r;
  else if (event == "end")
    log.end = r;
  else if (event == "plan")
    log.plan = r;
  else if (event == "profile")
    log.profile = r;
  else if (event == "population")
    log.population = r;
  else if (event == "tournament")
    log.tournaments.push_back(r);
  else if (event == "train")
    log.train.push_back(train_point(r));
  else if (event == "validation")
    log.validation.push_back(validation_point(r));
  else
    log.other.push_back(r);
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
      log::warn(path + ":" + std::to_string(line_number) +
                ": the last line is cut short (a run still writing?); skipped");
      break;
    }
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (!record.is_discarded() && record.is_object() && record.contains("event") && record["event"].is_string())
      if (const std::string problem = field_problem(record["event"], record); !problem.empty())
        throw Error(where + problem);
    if (record.is_discarded() || !take(log, record))
      throw Error(where + "not a record of a Tessera metrics log (a JSON object " +
                  "with an \"event\" on each line, as `tessera train --metrics` writes)");
    ++records;
  }
  if (records == 0) throw Error("'" + path + "' holds no record: is it a metrics log of `tessera train --metrics`?");
  return log;
}

double RunLog::elapsed_at(int64_t step) const {
  if (train.empty() || step <= 0) return 0.0;
  const auto after =
      std::lower_bound(train.begin(), train.end(), step, [](const TrainPoint& p, int64_t s) { return p.step < s; });
  if (after == train.end()) return train.back().elapsed_s;
  if (after == train.begin()) return after->elapsed_s * static_cast<double>(step) / static_cast<double>(after->step);
  const auto before = after - 1;
  // In double: the steps are the log's, and the difference of two (a negative one before a
  // large one) can overflow int64. Steps too close for a double to tell apart take the earlier time.
  const double span = static_cast<double>(after->step) - static_cast<double>(before->step);
  const double f = span > 0 ? (static_cast<double>(step) - static_cast<double>(before->step)) / span : 0.0;
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
