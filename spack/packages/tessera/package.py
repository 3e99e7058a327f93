# Spack recipe for Tessera. Variants map one to one onto the CMake options of CMakeLists.txt;
# spack/README.md shows install, dev-build and develop from a checkout.
import os

from spack.package import *

try:  # Spack >= 1.0 keeps the build systems in the builtin repository (Package API v2)
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack < 1.0 exports them from spack.package
    pass

#: Tessera has no public repository yet, so `tessera@main` is cloned from $TESSERA_GIT_URL (any
#: URL or path `git clone` accepts, e.g. /home/me/tessera). Without it, build a local checkout
#: with `spack dev-build` or `spack develop`, which fetch nothing.
TESSERA_GIT_URL = os.environ.get("TESSERA_GIT_URL", "https://git.example.invalid/tessera.git")


class Tessera(CMakePackage, CudaPackage):
    """Distributed training of 3D convolutional networks on CPUs and GPUs: Kokkos kernels
    (OpenMP or CUDA), oneDNN and cuDNN backends, a JSON model spec and the `tessera` command."""

    homepage = TESSERA_GIT_URL
    git = TESSERA_GIT_URL

    license("BSD-3-Clause")  # the LICENSE file at the top of the repository

    version("main", branch="main")

    variant("openmp", default=True, description="Kokkos with OpenMP host threads")
    variant("onednn", default=False, description="oneDNN CPU backend: TESSERA_ENABLE_ONEDNN")
    variant("cudnn", default=False, description="cuDNN GPU backend: TESSERA_ENABLE_CUDNN")
    variant("hdf5", default=True, description="HDF5 data readers and tessera datagen: TESSERA_ENABLE_HDF5")
    variant("tests", default=False, description="Catch2 test suite: TESSERA_ENABLE_TESTS")
    variant("perf", default=False, description="Benchmarks in perf/: TESSERA_ENABLE_PERF")

    depends_on("cxx", type="build")
    depends_on("cmake@3.20:", type="build")

    # The code is written to the Kokkos 3.4 API and for 4.x as well; Kokkos 5 (C++20) is untried.
    # Float gemm on LayoutRight Views is all Tessera asks of Kokkos Kernels, through a BLAS TPL
    # (choose one with e.g. ^openblas).
    depends_on("kokkos@3.4:4")
    depends_on("kokkos-kernels@3.4:4 +blas scalars=float layouts=right")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")
    # One build has one Kokkos device, compiled for one GPU architecture; KOKKOS_LAMBDA kernels
    # need cuda_lambda, and nvcc_wrapper (+wrapper) compiles them with the host compiler.
    for _cuda_arch in CudaPackage.cuda_arch_values:
        depends_on(
            f"kokkos+cuda+cuda_lambda+wrapper cuda_arch={_cuda_arch}",
            when=f"+cuda cuda_arch={_cuda_arch}",
        )
        depends_on(
            f"kokkos-kernels+cuda+cublas cuda_arch={_cuda_arch}",
            when=f"+cuda cuda_arch={_cuda_arch}",
        )
    conflicts("+cuda", when="cuda_arch=none", msg="name the GPU architecture, e.g. cuda_arch=80")

    depends_on("nlohmann-json@3.9:")  # 3.9 added JSON comments, which run configs may hold
    depends_on("cli11@2:")
    # MPI carries data and spatial parallelism from the data-parallel work on; depending on it
    # now keeps installed specs stable when that lands.
    depends_on("mpi")

    depends_on("onednn@2.6:2", when="+onednn")  # the backend targets the oneDNN 2.x API
    depends_on("hdf5@1.10:+mpi", when="+hdf5")  # parallel reads of hyperslabs
    depends_on("cudnn@9:", when="+cudnn")  # the backend is written to the cuDNN 9 API
    conflicts("+cudnn", when="~cuda", msg="the cuDNN backend needs +cuda cuda_arch=...")

    # Catch2 v2: the tests include <catch2/catch.hpp>, the header's path since 2.3.
    depends_on("catch2@2.3:2", type=("build", "link"), when="+tests")

    def cmake_args(self):
        args = [
            self.define_from_variant("TESSERA_ENABLE_ONEDNN", "onednn"),
            self.define_from_variant("TESSERA_ENABLE_CUDNN", "cudnn"),
            self.define_from_variant("TESSERA_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("TESSERA_ENABLE_TESTS", "tests"),
            self.define_from_variant("TESSERA_ENABLE_PERF", "perf"),
        ]
        if self.spec.satisfies("+cuda"):
            # Kokkos' CUDA build compiles every translation unit through nvcc_wrapper.
            args.append(self.define("CMAKE_CXX_COMPILER", self._kokkos_cxx()))
        if self.spec.satisfies("+cudnn"):
            # Spack's cudnn lives in a prefix of its own, not beside the CUDA toolkit.
            args.append(self.define("CUDNN_ROOT", self.spec["cudnn"].prefix))
        return args

    def _kokkos_cxx(self):
        kokkos = self.spec["kokkos"]
        if hasattr(kokkos, "kokkos_cxx"):  # Spack < 1.0: set by Kokkos' setup_dependent_package
            return kokkos.kokkos_cxx
        return self["kokkos"].kokkos_cxx  # Spack >= 1.0: a property of the Kokkos package
