// The `tessera` command. Arguments starting with --kokkos- go to Kokkos; everything else is
// ours. Errors of any kind are caught here, once, and end the process with a message and a
// non-zero exit.
#include <sched.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli_app.hpp"
#include "tessera/build_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/communicator.hpp"

namespace {

/// Whether this process has the node's CPUs to itself to spread threads over: the launcher
/// bound it to a subset (so its neighbours have other CPUs), or it is the only rank of the
/// node. Pinning the threads of several unbound ranks would stack them on the same CPUs.
bool owns_its_cpus() {
#ifdef __linux__
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) < sysconf(_SC_NPROCESSORS_ONLN)) return true;
#endif
  // Open MPI, MPICH (Hydra) and Slurm say how many ranks share the node, or at least that
  // there is a launcher.
  for (const char* local : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* n = std::getenv(local)) return std::string(n) == "1";
  for (const char* launched : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_ID"})
    if (std::getenv(launched) != nullptr) return false;
  return true;
}

/// When the user set neither OMP_PROC_BIND nor OMP_PLACES, runs this program again with
/// OMP_PROC_BIND=spread and OMP_PLACES=threads (Kokkos' advice, which it otherwise prints on
/// every run): threads that stay on their CPUs keep the pages they first touched local. The
/// OpenMP runtime reads these variables when it is loaded, before main, so setting them here
/// takes effect only in a new image of the program; exec keeps the process (and its place in
/// the MPI launch, which has not started yet). TESSERA_OMP_DEFAULTS=0 turns this off.
void default_openmp_binding(char* argv[]) {
#if defined(KOKKOS_ENABLE_OPENMP) && defined(__linux__)
  if (std::getenv("OMP_PROC_BIND") != nullptr || std::getenv("OMP_PLACES") != nullptr) return;
  if (const char* opt = std::getenv("TESSERA_OMP_DEFAULTS"); opt != nullptr && std::string(opt) == "0") return;
  if (!owns_its_cpus()) return;
  setenv("OMP_PROC_BIND", "spread", 1);
  setenv("OMP_PLACES", "threads", 1);
  execv("/proc/self/exe", argv);
  // No exec (no /proc): carry on as launched, threads unbound, and let Kokkos say so.
  unsetenv("OMP_PROC_BIND");
  unsetenv("OMP_PLACES");
#else
  (void)argv;
#endif
}

}  // namespace

int main(int argc, char* argv[]) {
  default_openmp_binding(argv);
  // MPI first: it may consume its own arguments, and every rank must take part even in --help.
  tessera::parallel::MpiSession mpi(argc, argv);
  std::vector<char*> ours{argv[0]}, kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::string(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(argv[i]);

  tessera::cli::Commands commands;
  const auto app = tessera::cli::make_app(commands, std::vector<std::string>(argv, argv + argc));
  if (const auto status = tessera::cli::parse(*app, ours, kokkos_args)) return *status;

  int kokkos_argc = static_cast<int>(kokkos_args.size());
  try {
    Kokkos::initialize(kokkos_argc, kokkos_args.data());
  } catch (const std::exception& e) {
    // A GPU build started where no device or driver works throws here, before any command.
    return tessera::parallel::handle_fatal_error(tessera::Error(
        std::string("Kokkos could not start its ") + Kokkos::DefaultExecutionSpace::name() +
        " execution space (this build runs its ops there; is a device with a working driver present?): " + e.what()));
  }
  const int status = tessera::cli::run_command(commands);
  Kokkos::finalize();
  return status;
}
