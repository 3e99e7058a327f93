#pragma once
#include <cstdint>
#include <string>

namespace tessera {

/// The memory this process's tensors can live in, as the machine states it: for host tensors
/// the smaller of the physical memory and the process's cgroup limit (what a batch system
/// grants a job), for device tensors the device's memory. It is shared by every rank that
/// runs on the same node (or device); dividing it is the caller's business.
struct MemoryCapacity {
  int64_t bytes = 0;
  std::string source;  // "physical memory", "cgroup limit", "GPU memory"
  int devices = 0;     // GPUs on the node for device memory (0: host memory)

  /// What one of `ranks_on_node` ranks may count on: the host memory split between them, or
  /// one device's memory split between the ranks that share it.
  int64_t per_rank(int ranks_on_node) const;
};

/// This machine's capacity for the memory space tensors are allocated in.
MemoryCapacity memory_capacity();

/// "23.4 GiB", "512 MiB", "1.6 TiB": bytes for people.
std::string human_bytes(double bytes);

}  // namespace tessera
