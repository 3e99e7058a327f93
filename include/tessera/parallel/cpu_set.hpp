#pragma once
#include <string>
#include <vector>

namespace tessera::parallel {

/// A set of processing units (hardware threads) named by their operating-system index, as in
/// a binding mask or a NUMA domain's CPUs. Written and read in the Linux list format that
/// taskset, numactl and /proc use ("0-15,32-47"), so it travels between ranks as text.
class CpuSet {
 public:
  CpuSet() = default;
  /// The given indices (any order, repeats allowed).
  explicit CpuSet(std::vector<int> pus);
  /// Reads the list format; throws ConfigError naming `where` on anything else.
  static CpuSet parse(const std::string& list, const std::string& where);

  /// The indices, ascending.
  const std::vector<int>& pus() const { return pus_; }
  int count() const { return static_cast<int>(pus_.size()); }
  bool empty() const { return pus_.empty(); }
  bool intersects(const CpuSet& other) const;
  CpuSet intersection(const CpuSet& other) const;
  /// The list format: ranges joined by commas ("" when empty).
  std::string str() const;

  bool operator==(const CpuSet& other) const { return pus_ == other.pus_; }
  bool operator!=(const CpuSet& other) const { return pus_ != other.pus_; }

 private:
  std::vector<int> pus_;
};

}  // namespace tessera::parallel
