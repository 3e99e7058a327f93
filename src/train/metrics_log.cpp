#include "tessera/train/metrics_log.hpp"

#include <cerrno>
#include <cstring>

#include "tessera/core/error.hpp"

namespace tessera::train {

MetricsLog::MetricsLog(const std::string& path) : path_(path) {
  if (path_.empty()) return;
  file_ = std::fopen(path_.c_str(), "w");
  if (!file_) throw IoError(path_ + ": cannot open the metrics log for writing: " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!file_) return;
  const std::string line = record.dump() + "\n";
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
    throw IoError(path_ + ": cannot write the metrics log: " + std::strerror(errno));
}

}  // namespace tessera::train
