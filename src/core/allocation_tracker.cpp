#include "tessera/core/allocation_tracker.hpp"

#include <Kokkos_Core.hpp>
#include <atomic>
#include <map>
#include <mutex>

#include "tessera/core/error.hpp"

namespace tessera {
namespace {

std::mutex mutex;
std::map<const void*, uint64_t> sizes;  // live allocations made while tracking
int64_t live = 0, peak = 0;
bool tracking = false;
Kokkos::Tools::Experimental::EventSet previous;

void on_allocate(Kokkos::Profiling::SpaceHandle, const char*, const void* ptr, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex);
  sizes[ptr] = size;
  live += static_cast<int64_t>(size);
  if (live > peak) peak = live;
}

void on_deallocate(Kokkos::Profiling::SpaceHandle, const char*, const void* ptr, uint64_t) {
  std::lock_guard<std::mutex> lock(mutex);
  // Only what was allocated while tracking counts: freeing older data is not a saving here.
  auto it = sizes.find(ptr);
  if (it == sizes.end()) return;
  live -= static_cast<int64_t>(it->second);
  sizes.erase(it);
}

}  // namespace

AllocationTracker::AllocationTracker() {
  std::lock_guard<std::mutex> lock(mutex);
  if (tracking) throw Error("AllocationTracker: one is already counting in this process");
  tracking = true;
  sizes.clear();
  live = peak = 0;
  previous = Kokkos::Tools::Experimental::get_callbacks();
  Kokkos::Tools::Experimental::set_allocate_data_callback(on_allocate);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(on_deallocate);
}

AllocationTracker::~AllocationTracker() {
  Kokkos::Tools::Experimental::set_allocate_data_callback(previous.allocate_data);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(previous.deallocate_data);
  std::lock_guard<std::mutex> lock(mutex);
  tracking = false;
  sizes.clear();
}

int64_t AllocationTracker::live_bytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return live;
}

int64_t AllocationTracker::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return peak;
}

}  // namespace tessera
