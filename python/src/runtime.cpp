#include "runtime.hpp"

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <set>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::python {

namespace {

// Touched only with the GIL held: every caller is Python code.
std::set<RuntimeResource*>& resources() {
  static std::set<RuntimeResource*> live;
  return live;
}
bool initialised_mpi = false;
bool stopped = false;

}  // namespace

RuntimeResource::RuntimeResource() { resources().insert(this); }
RuntimeResource::~RuntimeResource() { resources().erase(this); }

void start_runtime() {
  int running = 0, finalized = 0;
  MPI_Initialized(&running);
  MPI_Finalized(&finalized);
  if (finalized) throw Error("MPI was finalised before tessera was imported; import tessera before finalising MPI");
  if (!running) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed");
    initialised_mpi = true;
  }
  // Errors come back as codes, which Tessera turns into exceptions, instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::set_rank(rank);
  if (!Kokkos::is_initialized()) {
    try {
      // Kokkos' advice on thread binding is the `tessera` command's to act on (it re-executes
      // itself with OMP_PROC_BIND set); an interpreter cannot, so the warning is left out.
      char program[] = "tessera";
      char quiet[] = "--kokkos-disable-warnings";
      char* argv[] = {program, quiet, nullptr};
      int argc = 2;
      Kokkos::initialize(argc, argv);
    } catch (const std::exception& e) {
      throw Error(std::string("Kokkos could not start its ") + Kokkos::DefaultExecutionSpace::name() +
                  " execution space: " + e.what());
    }
  }
}

void stop_runtime() {
  if (stopped) return;
  stopped = true;
  // release() may end a resource's life: iterate over a copy.
  const std::set<RuntimeResource*> live = resources();
  for (RuntimeResource* r : live) r->release();
  if (Kokkos::is_initialized()) Kokkos::finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialised_mpi && !finalized) MPI_Finalize();
}

void require_runtime() {
  if (stopped) throw Error("the Tessera runtime has been shut down (the interpreter is exiting)");
}

}  // namespace tessera::python
