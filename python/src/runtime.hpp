#pragma once
// The process-wide state the Python module starts and stops: MPI and Kokkos.

namespace tessera::python {

/// Something the module hands to Python that holds Kokkos memory (a model, a training run).
/// Kokkos must outlive every allocation, but Python frees objects in any order at exit, so
/// each such object registers here and stop_runtime() releases its memory first; using it
/// afterwards raises tessera.Error.
class RuntimeResource {
 public:
  RuntimeResource();
  virtual ~RuntimeResource();
  RuntimeResource(const RuntimeResource&) = delete;
  RuntimeResource& operator=(const RuntimeResource&) = delete;
  /// Frees every Kokkos allocation the object holds.
  virtual void release() = 0;
};

/// Initialises MPI where nobody has (mpi4py, imported first, does; then it stays mpi4py's to
/// finalise), with MPI_THREAD_MULTIPLE as the `tessera` command asks, and Kokkos with its
/// defaults (OMP_NUM_THREADS and friends).
void start_runtime();
/// Releases every RuntimeResource, finalises Kokkos, and MPI where start_runtime() initialised
/// it. Called once, at interpreter exit (the package registers it with atexit).
void stop_runtime();
/// Throws tessera::Error when the runtime has been stopped.
void require_runtime();

}  // namespace tessera::python
