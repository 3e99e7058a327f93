#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/parallel/cpu_set.hpp"

namespace tessera::parallel {

/// The hardware of one node as hwloc sees it: packages (sockets), NUMA domains with their CPUs
/// and memory, cores with their hardware threads, and GPUs. Plain data once loaded, so the
/// placement checks run the same on a topology read from this machine, from an hwloc XML file
/// (`lstopo node.xml` on the machine of interest) or from a synthetic description such as
/// "package:2 numa:1 core:20 pu:2" (hwloc's synthetic syntax), which is how the tests model
/// machines they do not run on.
class NodeTopology {
 public:
  /// A package or NUMA domain: hwloc's OS index, its CPUs and (NUMA) its local memory.
  struct Domain {
    int os_index = 0;
    CpuSet cpus;
    uint64_t memory_bytes = 0;
  };
  /// A GPU or coprocessor that hwloc reports as an OS device ("cuda0", "rsmi0", ...), with
  /// the NUMA domains closest to it (empty when hwloc does not know).
  struct Gpu {
    std::string name;
    std::vector<int> numa_domains;
  };

  /// Whether this build reads topologies (TESSERA_ENABLE_HWLOC); without it every loader
  /// throws Error saying so.
  static bool supported();
  /// This node; its GPUs only with `gpus` (they take a scan of the PCI devices).
  static NodeTopology this_node(bool gpus = true);
  /// A node described in hwloc's synthetic syntax; ConfigError naming `where` when hwloc
  /// refuses the description.
  static NodeTopology from_synthetic(const std::string& description, const std::string& where);
  /// A node exported by `lstopo FILE.xml`; ConfigError naming the file when it cannot be read.
  static NodeTopology from_xml_file(const std::string& path);

  const std::vector<Domain>& packages() const { return packages_; }
  const std::vector<Domain>& numa_domains() const { return numa_; }
  /// The hardware threads of each core.
  const std::vector<CpuSet>& cores() const { return cores_; }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  /// Every hardware thread of the node.
  const CpuSet& cpus() const { return cpus_; }

  /// The positions in numa_domains() (not OS indices) of the domains that `cpus` touches.
  std::vector<int> numa_domains_of(const CpuSet& cpus) const;
  /// The positions in cores() of the cores that `cpus` touches.
  std::vector<int> cores_of(const CpuSet& cpus) const;
  /// One line per level: counts, each NUMA domain's CPUs and memory, the GPUs.
  std::string describe() const;

  /// Builds a topology from parts (what the loaders do after reading hwloc's tree).
  NodeTopology(std::vector<Domain> packages, std::vector<Domain> numa, std::vector<CpuSet> cores,
               std::vector<Gpu> gpus);

 private:
  std::vector<Domain> packages_, numa_;
  std::vector<CpuSet> cores_;
  std::vector<Gpu> gpus_;
  CpuSet cpus_;
};

/// The CPUs this process's threads may run on (hwloc's process binding: on Linux the union
/// of its threads' masks). Throws Error when the build has no hwloc.
CpuSet this_process_binding();

}  // namespace tessera::parallel
