# Spack recipe for Tessera. Variants map one to one onto the CMake options of CMakeLists.txt;
# spack/README.md shows install, dev-build and develop from a checkout.
# scripts/check_spack_recipe.py checks this file against CMakeLists.txt (no Spack needed).
from spack.package import *

try:  # Spack >= 1.0 keeps the build systems in the builtin repository (Package API v2)
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack < 1.0 exports them from spack.package
    pass


class Tessera(CMakePackage, CudaPackage):
    """Distributed training of 3D convolutional networks on CPUs and GPUs: Kokkos kernels
    (OpenMP or CUDA), oneDNN and cuDNN backends, a JSON model spec and the `tessera` command."""

    # Tessera has no public repository or web site yet. The URL below is a placeholder in the
    # reserved .invalid domain, so that nothing is ever fetched from a host that merely looks
    # real; point Spack at an actual clone with package_attributes in packages.yaml, or build a
    # checkout with `spack develop` / `spack dev-build` (spack/README.md). It is a literal,
    # not read from the environment, so the recipe reads the same in every shell and the
    # source is chosen in configuration. homepage is left unset until there is one: a
    # made-up address would only mislead `spack info`.
    git = "https://tessera.invalid/tessera.git"

    license("BSD-3-Clause")  # the LICENSE file at the top of the repository
    # No maintainers(): it takes GitHub user names, and Tessera is not on GitHub yet.

    version("main", branch="main")

    variant("openmp", default=True, description="Kokkos with OpenMP host threads")
    # oneDNN is the fast CPU path: without it convolutions run on the portable Kokkos kernels,
    # 5.5x slower on the quick start's example (67 against 368 samples/s), more on larger
    # volumes. So it is on by default wherever oneDNN runs; elsewhere the variant is absent,
    # and so it is in CUDA builds, whose tensors live in GPU memory that oneDNN cannot read.
    for _family in ("x86_64", "aarch64", "ppc64le"):
        variant(
            "onednn",
            default=True,
            description="oneDNN CPU backend: TESSERA_ENABLE_ONEDNN",
            when=f"target={_family}: ~cuda",
        )
    variant("cudnn", default=False, description="cuDNN GPU backend: TESSERA_ENABLE_CUDNN")
    variant(
        "hdf5",
        default=True,
        description="HDF5 data readers and tessera datagen: TESSERA_ENABLE_HDF5",
    )
    variant(
        "hwloc",
        default=True,
        description="node topology for placement checks and info --topology: TESSERA_ENABLE_HWLOC",
    )
    variant("python", default=False, description="Python module tessera: TESSERA_ENABLE_PYTHON")
    variant(
        "simgrid",
        default=False,
        description="tessera-sim, steps replayed on modelled networks: TESSERA_ENABLE_SIMGRID",
    )
    variant("tests", default=False, description="Catch2 test suite: TESSERA_ENABLE_TESTS")
    variant("perf", default=False, description="Benchmarks in perf/: TESSERA_ENABLE_PERF")

    # Kokkos compiles for exactly one GPU architecture, and Kokkos' recipe declares cuda_arch
    # single-valued; CudaPackage's is multi-valued, so cuda_arch=70,80 was accepted here and
    # refused only through Kokkos. Declaring the variant again with the same `when` replaces
    # CudaPackage's declaration (Kokkos' recipe does the same), in Spack 0.23 and 1.x alike,
    # and Spack then refuses a second value for Tessera itself. A conflict for every pair of
    # architectures would say the same in hundreds of directives.
    variant(
        "cuda_arch",
        description="CUDA architecture, exactly one (Kokkos compiles for one)",
        values=("none", *CudaPackage.cuda_arch_values),
        default="none",
        multi=False,
        sticky=True,
        when="+cuda",
    )

    # Spack 1.x hands a build only the compilers its package declares. CMake's project() asks
    # for C++ alone; C is enabled only with TESSERA_ENABLE_HDF5 (FindHDF5 probes it).
    depends_on("cxx", type="build")
    depends_on("c", type="build", when="+hdf5")
    depends_on("cmake@3.20:", type="build")

    # The code is written to the Kokkos 3.4 API and for 4.x as well; Kokkos 5 (C++20) is untried.
    # Float gemm on LayoutRight Views is all Tessera asks of Kokkos Kernels, through a BLAS TPL
    # (choose one with e.g. ^openblas). scalars is multi-valued and `scalars=float` means "at
    # least float": the concretizer keeps Kokkos Kernels' default, double, beside it. That
    # costs build time (double instantiations too), but lets one kokkos-kernels serve Tessera
    # and the packages that need double in one environment; pinning with `scalars:=float`
    # would rule that out, so it is left to users who want the lean build (README).
    # layouts is single-valued, so `layouts=right` is exact.
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
    # MPI carries data and spatial parallelism.
    depends_on("mpi")

    depends_on("onednn@2.6:3", when="+onednn")  # the backend is written to the 2.x and 3.x APIs
    depends_on("hdf5@1.10:+mpi", when="+hdf5")  # parallel reads of hyperslabs
    depends_on("zlib-api", when="+hdf5")  # the gzipped IDX files of datagen fashion-mnist
    depends_on("hwloc@2:", when="+hwloc")  # the hwloc 2 API (NUMA nodes as memory children)
    depends_on("pkgconfig", type="build", when="+hwloc")  # CMake finds hwloc through its .pc file
    depends_on("cudnn@9:", when="+cudnn")  # the backend is written to the cuDNN 9 API
    conflicts("+cudnn", when="~cuda", msg="the cuDNN backend needs +cuda cuda_arch=...")

    # The module is a pybind11 extension (headers only, at build time) that hands numpy arrays
    # in and out; it installs into the prefix's lib/pythonX.Y/site-packages, which extends()
    # puts on the Python path of environments and `spack load`.
    extends("python", when="+python")
    depends_on("python@3.8:", type=("build", "run"), when="+python")
    depends_on("py-pybind11@2.6:", type="build", when="+python")
    depends_on("py-numpy", type=("build", "run"), when="+python")

    # tessera-sim is a program of its own built on SimGrid's S4U interface (3.30 has the
    # cluster zones it builds platforms with); it links nothing of Tessera's MPI.
    depends_on("simgrid@3.30:", when="+simgrid")

    # Catch2 v2 is header-only, so nothing of it is linked: the tests include
    # <catch2/catch.hpp>, the header's path since 2.3.
    depends_on("catch2@2.3:2", type=("build", "test"), when="+tests")

    def cmake_args(self):
        args = [
            self.define_from_variant("TESSERA_ENABLE_ONEDNN", "onednn"),
            self.define_from_variant("TESSERA_ENABLE_CUDNN", "cudnn"),
            self.define_from_variant("TESSERA_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("TESSERA_ENABLE_HWLOC", "hwloc"),
            self.define_from_variant("TESSERA_ENABLE_PYTHON", "python"),
            self.define_from_variant("TESSERA_ENABLE_SIMGRID", "simgrid"),
            self.define_from_variant("TESSERA_ENABLE_TESTS", "tests"),
            self.define_from_variant("TESSERA_ENABLE_PERF", "perf"),
            # Spack's compiler wrappers pass the flags of the spec's target (target=zen4 ...):
            # Tessera adds no -march of its own.
            self.define("TESSERA_HOST_ARCH", "none"),
        ]
        if self.spec.satisfies("+cuda"):
            # Kokkos' CUDA build compiles every translation unit through nvcc_wrapper.
            args.append(self.define("CMAKE_CXX_COMPILER", self._kokkos_cxx()))
        if self.spec.satisfies("+python"):
            # The interpreter of the spec, not whichever python3 comes first on the PATH.
            args.append(self.define("Python3_EXECUTABLE", self.spec["python"].command.path))
        if self.spec.satisfies("+cudnn"):
            # Spack's cudnn lives in a prefix of its own, not beside the CUDA toolkit.
            args.append(self.define("CUDNN_ROOT", self.spec["cudnn"].prefix))
        return args

    def _kokkos_cxx(self):
        kokkos = self.spec["kokkos"]
        if hasattr(kokkos, "kokkos_cxx"):  # Spack < 1.0: set by Kokkos' setup_dependent_package
            return kokkos.kokkos_cxx
        return self["kokkos"].kokkos_cxx  # Spack >= 1.0: a property of the Kokkos package

    # Stand-alone tests (`spack test run tessera`): the installed command on its own, then a
    # few training steps of the example CMake installs in share/tessera/examples.
    def test_info(self):
        """tessera info reports its Kokkos device and op backends"""
        tessera = Executable(self.prefix.bin.tessera)
        out = tessera("info", output=str, error=str)
        for expected in ("kokkos:", "op backends:"):
            assert expected in out, f"`tessera info` printed no '{expected}':\n{out}"

    def test_train_tiny(self):
        """tessera trains the installed cosmoflow_tiny example for two steps"""
        config = join_path(self.prefix.share, "tessera", "examples", "cosmoflow_tiny.json")
        tessera = Executable(self.prefix.bin.tessera)
        out = tessera(
            "train", config, "--max-steps", "2", "--epochs", "1", "--no-progress",
            output=str, error=str,
        )
        assert "done: 2 steps" in out, f"`tessera train` did not finish 2 steps:\n{out}"

    def test_python_import(self):
        """the Python module imports and predicts with the installed example's model"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("built without +python")
        python = Executable(self.spec["python"].command.path)
        config = join_path(self.prefix.share, "tessera", "examples", "cosmoflow_tiny.json")
        script = (
            "import sys, numpy, tessera; m = tessera.Model(sys.argv[1]); "
            "print(m.predict(numpy.zeros((1,) + m.sample_shape, numpy.float32)).shape)"
        )
        out = python("-c", script, config, output=str, error=str)
        assert "(1, 4)" in out, f"the Python module did not predict:\n{out}"
