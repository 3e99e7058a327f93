#pragma once
#include <cstdint>

namespace tessera {

/// Counts the bytes Kokkos allocates while it exists: live (allocated and not yet freed since
/// it started) and the peak of live. Through Kokkos Tools' allocation callbacks, which it
/// installs and, when it goes, gives back to whatever was there before (a tool library keeps
/// its other callbacks meanwhile, but not its allocation events). One at a time per process;
/// memory allocated outside Kokkos (a library's own) is not seen.
class AllocationTracker {
 public:
  AllocationTracker();
  ~AllocationTracker();
  AllocationTracker(const AllocationTracker&) = delete;
  AllocationTracker& operator=(const AllocationTracker&) = delete;

  int64_t live_bytes() const;
  int64_t peak_bytes() const;
};

}  // namespace tessera
