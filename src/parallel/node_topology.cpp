#include "tessera/parallel/node_topology.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

#if TESSERA_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace tessera::parallel {

NodeTopology::NodeTopology(std::vector<Domain> packages, std::vector<Domain> numa, std::vector<CpuSet> cores,
                           std::vector<Gpu> gpus)
    : packages_(std::move(packages)), numa_(std::move(numa)), cores_(std::move(cores)), gpus_(std::move(gpus)) {
  std::vector<int> all;
  for (const CpuSet& core : cores_) all.insert(all.end(), core.pus().begin(), core.pus().end());
  cpus_ = CpuSet(std::move(all));
}

std::vector<int> NodeTopology::numa_domains_of(const CpuSet& cpus) const {
  std::vector<int> out;
  for (size_t i = 0; i < numa_.size(); ++i)
    if (numa_[i].cpus.intersects(cpus)) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> NodeTopology::cores_of(const CpuSet& cpus) const {
  std::vector<int> out;
  for (size_t i = 0; i < cores_.size(); ++i)
    if (cores_[i].intersects(cpus)) out.push_back(static_cast<int>(i));
  return out;
}

std::string NodeTopology::describe() const {
  std::ostringstream s;
  s << packages_.size() << " package(s), " << numa_.size() << " NUMA domain(s), " << cores_.size() << " core(s), "
    << cpus_.count() << " hardware thread(s), " << gpus_.size() << " GPU(s)\n";
  for (const Domain& d : numa_) {
    s << "  NUMA " << d.os_index << ": CPUs " << d.cpus.str() << ", " << cores_of(d.cpus).size() << " cores, "
      << fixed(static_cast<double>(d.memory_bytes) / (1u << 30), 1) << " GiB\n";
  }
  for (const Gpu& g : gpus_) {
    s << "  GPU " << g.name << ": near NUMA";
    if (g.numa_domains.empty()) s << " (unknown)";
    for (int n : g.numa_domains) s << " " << numa_[static_cast<size_t>(n)].os_index;
    s << "\n";
  }
  return s.str();
}

#if TESSERA_HAVE_HWLOC
namespace {

using Topology = std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)>;
using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)>;

Topology make_topology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) throw Error("hwloc_topology_init failed");
  return Topology(t, hwloc_topology_destroy);
}

void load(const Topology& t, const std::string& what) {
  if (hwloc_topology_load(t.get()) != 0) throw Error("hwloc could not load the topology of " + what);
}

CpuSet to_cpus(hwloc_const_bitmap_t set) {
  std::vector<int> pus;
  if (set == nullptr || hwloc_bitmap_weight(set) < 0) return CpuSet();  // infinite: not a real set
  unsigned i = 0;
  hwloc_bitmap_foreach_begin(i, set) { pus.push_back(static_cast<int>(i)); }
  hwloc_bitmap_foreach_end();
  return CpuSet(std::move(pus));
}

std::vector<NodeTopology::Domain> domains(const Topology& t, hwloc_obj_type_t type) {
  std::vector<NodeTopology::Domain> out;
  const int n = hwloc_get_nbobjs_by_type(t.get(), type);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t.get(), type, static_cast<unsigned>(i));
    NodeTopology::Domain d;
    d.os_index = static_cast<int>(o->os_index);
    d.cpus = to_cpus(o->cpuset);
    d.memory_bytes = type == HWLOC_OBJ_NUMANODE ? o->attr->numanode.local_memory : o->total_memory;
    out.push_back(std::move(d));
  }
  return out;
}

NodeTopology convert(const Topology& t) {
  auto packages = domains(t, HWLOC_OBJ_PACKAGE);
  auto numa = domains(t, HWLOC_OBJ_NUMANODE);
  std::vector<CpuSet> cores;
  const int n = hwloc_get_nbobjs_by_type(t.get(), HWLOC_OBJ_CORE);
  for (int i = 0; i < n; ++i)
    cores.push_back(to_cpus(hwloc_get_obj_by_type(t.get(), HWLOC_OBJ_CORE, static_cast<unsigned>(i))->cpuset));
  if (cores.empty()) {  // a topology without cores (some VMs): each hardware thread stands alone
    const CpuSet all = to_cpus(hwloc_topology_get_topology_cpuset(t.get()));
    for (int pu : all.pus()) cores.push_back(CpuSet({pu}));
  }
  // One GPU may appear as several OS devices (cuda0 and nvml0 under one PCI device): they
  // are merged by their parent, and the DRM nodes (card0, renderD128) that every GPU has are
  // left out, as they repeat the others.
  std::vector<NodeTopology::Gpu> gpus;
  std::map<hwloc_obj_t, size_t> gpu_of_parent;
  for (hwloc_obj_t o = hwloc_get_next_osdev(t.get(), nullptr); o != nullptr; o = hwloc_get_next_osdev(t.get(), o)) {
    const auto type = o->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_GPU && type != HWLOC_OBJ_OSDEV_COPROC) continue;
    const std::string name = o->name ? o->name : "gpu";
    if (name.rfind("card", 0) == 0 || name.rfind("renderD", 0) == 0) continue;
    auto [it, fresh] = gpu_of_parent.emplace(o->parent, gpus.size());
    if (!fresh) {
      gpus[it->second].name += "/" + name;
      continue;
    }
    NodeTopology::Gpu g;
    g.name = name;
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(t.get(), o);
    if (near != nullptr && near->nodeset != nullptr)
      for (size_t i = 0; i < numa.size(); ++i)
        if (hwloc_bitmap_isset(near->nodeset, static_cast<unsigned>(numa[i].os_index)))
          g.numa_domains.push_back(static_cast<int>(i));
    gpus.push_back(std::move(g));
  }
  return NodeTopology(std::move(packages), std::move(numa), std::move(cores), std::move(gpus));
}

}  // namespace

bool NodeTopology::supported() { return true; }

NodeTopology NodeTopology::this_node(bool gpus) {
  Topology t = make_topology();
  if (gpus) hwloc_topology_set_io_types_filter(t.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  load(t, "this node");
  return convert(t);
}

NodeTopology NodeTopology::from_synthetic(const std::string& description, const std::string& where) {
  Topology t = make_topology();
  if (hwloc_topology_set_synthetic(t.get(), description.c_str()) != 0)
    throw ConfigError(where, "hwloc does not accept '" + description +
                                 "' as a synthetic topology (e.g. \"package:2 numa:1 core:20 pu:2\")");
  load(t, "'" + description + "'");
  return convert(t);
}

NodeTopology NodeTopology::from_xml_file(const std::string& path) {
  // hwloc would fall back silently to this machine for a file it cannot open.
  if (!std::ifstream(path)) throw ConfigError(path, "cannot open the topology file");
  Topology t = make_topology();
  hwloc_topology_set_io_types_filter(t.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_set_xml(t.get(), path.c_str()) != 0 || hwloc_topology_load(t.get()) != 0)
    throw ConfigError(path, "not an hwloc topology (write one with lstopo FILE.xml)");
  return convert(t);
}

CpuSet this_process_binding() {
  Topology t = make_topology();
  load(t, "this node");
  Bitmap set(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  if (hwloc_get_cpubind(t.get(), set.get(), HWLOC_CPUBIND_PROCESS) != 0)
    return to_cpus(hwloc_topology_get_allowed_cpuset(t.get()));  // binding unknown: all it may use
  return to_cpus(set.get());
}

#else

namespace {
Error no_hwloc() { return Error("this build reads no node topology (built with TESSERA_ENABLE_HWLOC=OFF)"); }
}  // namespace

bool NodeTopology::supported() { return false; }
NodeTopology NodeTopology::this_node(bool) { throw no_hwloc(); }
NodeTopology NodeTopology::from_synthetic(const std::string&, const std::string&) { throw no_hwloc(); }
NodeTopology NodeTopology::from_xml_file(const std::string&) { throw no_hwloc(); }
CpuSet this_process_binding() { throw no_hwloc(); }

#endif

}  // namespace tessera::parallel
