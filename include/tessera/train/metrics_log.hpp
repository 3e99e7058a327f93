#pragma once
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::train {

/// A JSON-lines log of training events (one object per line, flushed per line so a crashed
/// run keeps everything logged before the crash). Disabled when the path is empty.
class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  void write(const nlohmann::json& record);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace tessera::train
