#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <sstream>

#include "commands.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/node_topology.hpp"
#include "tessera/parallel/placement_check.hpp"
#include "tessera/registry/backend_registry.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif

namespace tessera::cli {

namespace {

/// `tessera info --topology`: the node, this process's binding (on this node), and for each
/// kind of split the ranks per node and the launch that places them.
std::string topology_report(const std::string& source) {
  using parallel::NodeTopology;
  const bool here = source.empty();
  const bool xml = source.size() > 4 && source.compare(source.size() - 4, 4, ".xml") == 0;
  const NodeTopology node = here  ? NodeTopology::this_node()
                            : xml ? NodeTopology::from_xml_file(source)
                                  : NodeTopology::from_synthetic(source, "--topology-of");
  std::ostringstream s;
  s << "node:           " << (here ? "this node" : source) << "\n" << node.describe();
  if (here) {
    const parallel::CpuSet binding = parallel::this_process_binding();
    s << "this process:   CPUs " << binding.str() << " (" << node.cores_of(binding).size() << " of "
      << node.cores().size() << " cores), NUMA domain(s)";
    for (int d : node.numa_domains_of(binding)) s << " " << node.numa_domains()[static_cast<size_t>(d)].os_index;
    s << "\n";
  }
  const int per_node = parallel::recommended_ranks_per_node(node);
  s << "recommended launch (ranks per node: mapping):\n";
  s << "  sample or spatial splits: " << per_node
    << ", one per NUMA domain: " << parallel::recommended_launch(node, per_node) << "\n";
  for (int group : {2, 4, 8}) {
    const int n = parallel::recommended_ranks_per_node(node, group);
    s << "  channel or filter split over " << group << ": ";
    if (n > static_cast<int>(node.cores().size())) {
      s << "does not fit (" << n << " ranks on " << node.cores().size() << " cores)\n";
      continue;
    }
    s << n << " (groups of " << group << " consecutive ranks inside a node): " << parallel::recommended_launch(node, n)
      << "\n";
  }
  if (!node.gpus().empty()) {
    const int gpus = static_cast<int>(node.gpus().size());
    s << "  GPU build: " << gpus << ", one per GPU (a channel group of up to " << gpus
      << " GPUs stays in the node): " << parallel::recommended_launch(node, gpus) << "\n";
  }
  return s.str();
}

}  // namespace

std::string onednn_isa_description() {
#if TESSERA_ENABLE_ONEDNN
  return onednn_backend::dispatched_isa() + " (bf16 instructions: " +
         (onednn_backend::has_bf16_instructions() ? "yes" : "no") + ")";
#else
  return "oneDNN not compiled in";
#endif
}

int run_info(const InfoArgs& args) {
  if (args.topology || !args.topology_of.empty()) {
    log::info(topology_report(args.topology_of));
    return 0;
  }
  std::ostringstream s;
  s << "tessera " << TESSERA_VERSION << " (" << TESSERA_BUILD_TYPE << ", " << TESSERA_CXX_COMPILER << ")\n";
  s << "kokkos:         " << KOKKOS_VERSION / 10000 << "." << (KOKKOS_VERSION / 100) % 100 << "."
    << KOKKOS_VERSION % 100 << ", default execution space " << Kokkos::DefaultExecutionSpace::name()
    << " with concurrency " << Kokkos::DefaultExecutionSpace().concurrency() << "\n";
  s << "kokkos kernels: " << TESSERA_KOKKOSKERNELS_VERSION << "\n";
  s << "op backends:    auto";
  for (const auto& b : registry::available_backends()) s << ", " << b;
  s << "\n";
#if TESSERA_ENABLE_ONEDNN
  s << "onednn:         " << onednn_backend::version_string() << "\n";
  s << "onednn isa:     " << onednn_isa_description() << "\n";
#else
  s << "onednn:         not compiled in (TESSERA_ENABLE_ONEDNN=OFF)\n";
#endif
#if TESSERA_ENABLE_CUDNN
  s << "cudnn:          " << cudnn_backend::version_string() << "\n";
#else
  s << "cudnn:          not compiled in (TESSERA_ENABLE_CUDNN=OFF)\n";
#endif
  s << "hdf5:           " << (TESSERA_ENABLE_HDF5 ? "compiled in" : "not compiled in (TESSERA_ENABLE_HDF5=OFF)") << "\n";
  const char* bind = std::getenv("OMP_PROC_BIND");
  const char* places = std::getenv("OMP_PLACES");
  s << "openmp binding: OMP_PROC_BIND=" << (bind ? bind : "(unset)") << ", OMP_PLACES=" << (places ? places : "(unset)")
    << "\n";
  s << "hwloc:          "
    << (parallel::NodeTopology::supported() ? "compiled in (tessera info --topology)"
                                            : "not compiled in (TESSERA_ENABLE_HWLOC=OFF)")
    << "\n";
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(mpi_version, &length);
  std::string mpi_line(mpi_version, static_cast<size_t>(length));
  mpi_line = mpi_line.substr(0, mpi_line.find_first_of("\n,"));
  s << "mpi:            " << mpi_line << ", " << parallel::Communicator::world().size() << " rank(s) in this job\n";
  s << "kokkos config:\n";
  std::ostringstream k;
  Kokkos::print_configuration(k, false);
  s << k.str();
  log::info(s.str());
  if (const std::string w = registry::portable_only_warning(registry::available_backends()); !w.empty()) log::warn(w);
  return 0;
}

}  // namespace tessera::cli
