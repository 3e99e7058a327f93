#include <Kokkos_Core.hpp>

#include <sstream>

#include "commands.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/registry/backend_registry.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif

namespace tessera::cli {

int run_info() {
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
#else
  s << "onednn:         not compiled in (TESSERA_ENABLE_ONEDNN=OFF)\n";
#endif
#if TESSERA_ENABLE_CUDNN
  s << "cudnn:          " << cudnn_backend::version_string() << "\n";
#else
  s << "cudnn:          not compiled in (TESSERA_ENABLE_CUDNN=OFF)\n";
#endif
  s << "hdf5:           " << (TESSERA_ENABLE_HDF5 ? "compiled in" : "not compiled in (TESSERA_ENABLE_HDF5=OFF)") << "\n";
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
  return 0;
}

}  // namespace tessera::cli
