#include "tessera/core/profiling.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <vector>

#include "tessera/core/format.hpp"

namespace tessera {

Profiler& Profiler::instance() {
  static Profiler p;
  return p;
}

void Profiler::add(const std::string& name, double seconds) {
  auto& e = entries_[name];
  e.seconds += seconds;
  e.calls += 1;
}

std::string Profiler::report(double total_seconds) const {
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  std::string out = "region                                   calls    total_s   ms/call  share\n";
  for (const auto& [name, e] : rows)
    out += format("%-40s %6ld %10.3f %9.3f %5.1f%%\n", name.c_str(), e.calls, e.seconds,
                  1e3 * e.seconds / static_cast<double>(std::max(1L, e.calls)),
                  total_seconds > 0 ? 100.0 * e.seconds / total_seconds : 0.0);
  return out;
}

namespace {
std::atomic<RegionListener> region_listener{nullptr};
}  // namespace

void set_region_listener(RegionListener listener) { region_listener.store(listener); }

ProfileRegion::ProfileRegion(std::string name) : name_(std::move(name)), timed_(Profiler::instance().enabled()) {
  if (auto listener = region_listener.load(std::memory_order_relaxed)) listener(name_, true);
  Kokkos::Profiling::pushRegion(name_);
  if (timed_) {
    Kokkos::fence();
    start_ = std::chrono::steady_clock::now();
  }
}

ProfileRegion::~ProfileRegion() {
  if (timed_) {
    Kokkos::fence();
    Profiler::instance().add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  Kokkos::Profiling::popRegion();
  if (auto listener = region_listener.load(std::memory_order_relaxed)) listener(name_, false);
}

double fenced_seconds(const std::function<void()>& f) {
  Kokkos::fence();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  Kokkos::fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tessera
