#pragma once

namespace tessera::kokkos_backend {

/// Keeps the host BLAS under Kokkos Kernels' gemm on the thread that calls it, once per
/// process, before the first host gemm.
///
/// Why: Debian's OpenBLAS (the pthread build) keeps a thread pool of its own, one thread per
/// CPU, beside the OpenMP threads Kokkos and oneDNN share. Measured on 2 cores
/// (`tessera bench ops`, cosmoflow-small at 32³, the sum of its Kokkos op times): with
/// `--kokkos-threads=1` the gemms still ran on both cores (277 ms; 358 ms on one), so a
/// "one-thread" run was not one; with 2 Kokkos threads the OpenMP thread spinning between
/// regions fought OpenBLAS's for the cores (417 ms; 310 ms with the gemms on the calling
/// thread). A job of several ranks per node would start one pool of CPU-count threads per
/// rank. With the gemm on the caller, a rank uses the threads it was given and no more.
/// OPENBLAS_NUM_THREADS, when set, is the user's choice and is left alone; a BLAS other than
/// OpenBLAS is left alone too.
void keep_blas_on_calling_thread();

}  // namespace tessera::kokkos_backend
