#include "tessera/parallel/cpu_set.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>

#include "tessera/core/error.hpp"

namespace tessera::parallel {

CpuSet::CpuSet(std::vector<int> pus) : pus_(std::move(pus)) {
  std::sort(pus_.begin(), pus_.end());
  pus_.erase(std::unique(pus_.begin(), pus_.end()), pus_.end());
}

CpuSet CpuSet::parse(const std::string& list, const std::string& where) {
  auto bad = [&](const std::string& why) {
    return ConfigError(where, "'" + list + "' is not a CPU list such as 0-15,32-47: " + why);
  };
  // Parsed by hand: a stream would accept "3x" or "-1" without complaint.
  auto number = [&](const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + text + "' is not a CPU index");
    errno = 0;
    const long v = std::strtol(text.c_str(), nullptr, 10);
    if (errno != 0 || v > (1L << 24)) throw bad("CPU index " + text + " is out of range");
    return static_cast<int>(v);
  };
  std::vector<int> pus;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const size_t dash = item.find('-');
    const int first = number(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first) throw bad("range " + item + " runs backwards");
    for (int pu = first; pu <= last; ++pu) pus.push_back(pu);
    start = end + 1;
    if (end + 1 == list.size()) throw bad("it ends with a comma");
  }
  return CpuSet(std::move(pus));
}

bool CpuSet::intersects(const CpuSet& other) const { return !intersection(other).empty(); }

CpuSet CpuSet::intersection(const CpuSet& other) const {
  std::vector<int> both;
  std::set_intersection(pus_.begin(), pus_.end(), other.pus_.begin(), other.pus_.end(), std::back_inserter(both));
  CpuSet s;
  s.pus_ = std::move(both);
  return s;
}

std::string CpuSet::str() const {
  std::string s;
  for (size_t i = 0; i < pus_.size();) {
    size_t j = i;
    while (j + 1 < pus_.size() && pus_[j + 1] == pus_[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(pus_[i]);
    if (j > i) s += "-" + std::to_string(pus_[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace tessera::parallel
