#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace tessera {

/// Wall-clock time per named region, accumulated while enabled (`tessera train --profile`).
/// Regions are also pushed to Kokkos Tools, so a Kokkos profiler sees the same names.
class Profiler {
 public:
  struct Entry {
    double seconds = 0.0;
    long calls = 0;
  };
  static Profiler& instance();
  void enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  void add(const std::string& name, double seconds);
  const std::map<std::string, Entry>& entries() const { return entries_; }
  void reset() { entries_.clear(); }
  /// A table of regions sorted by time, with their share of `total_seconds`.
  std::string report(double total_seconds) const;

 private:
  bool enabled_ = false;
  std::map<std::string, Entry> entries_;
};

/// Told of every ProfileRegion as it opens (`open`) and closes, on the thread that runs it,
/// whether or not profiling is on: how the MPI trace (parallel::MpiTrace) learns which step and
/// layer an MPI call belongs to. One listener at a time; null: none.
using RegionListener = void (*)(const std::string& name, bool open);
void set_region_listener(RegionListener listener);

/// RAII region: a Kokkos Tools region always; a timed Profiler entry (with a fence, so
/// asynchronous kernels are charged to the right region) only when profiling is on.
class ProfileRegion {
 public:
  explicit ProfileRegion(std::string name);
  ~ProfileRegion();
  ProfileRegion(const ProfileRegion&) = delete;
  ProfileRegion& operator=(const ProfileRegion&) = delete;

 private:
  std::string name_;
  bool timed_;
  std::chrono::steady_clock::time_point start_;
};

/// Wall-clock seconds of `f`, fenced before and after so that asynchronous kernels it launches
/// count and earlier ones do not.
double fenced_seconds(const std::function<void()>& f);

}  // namespace tessera
