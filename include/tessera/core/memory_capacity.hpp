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

/// The memory limit of the cgroups a process is in: `membership` is the text of
/// /proc/<pid>/cgroup and `root` where the cgroup file systems are mounted (/sys/fs/cgroup).
/// The smallest of cgroup v2's memory.max and v1's memory.limit_in_bytes along the process's
/// path and every cgroup above it, since a parent's limit binds its children: a batch system
/// that puts a job in /slurm/uid_1/job_2 without a cgroup namespace limits that cgroup, not the
/// root. int64 max where no limit is set or none can be read.
int64_t cgroup_memory_limit(const std::string& root, const std::string& membership);

/// "23.4 GiB", "512 MiB", "1.6 TiB": bytes for people.
std::string human_bytes(double bytes);

}  // namespace tessera
