#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::train {

/// A JSON-lines log of training events (one object per line, flushed per line so a crashed
/// run keeps everything logged before the crash). Each line goes out in one write(2), so a
/// process ended by a signal between two writes leaves whole lines only. Disabled when the
/// path is empty.
class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  void write(const nlohmann::json& record);

 private:
  std::string path_;
  int fd_ = -1;
};

/// The path of a log kept beside the log `path`: `tag` before its extension
/// ("run.jsonl", ".trainer2" → "run.trainer2.jsonl"; "run", ".x" → "run.x").
std::string log_beside(const std::string& path, const std::string& tag);

}  // namespace tessera::train
