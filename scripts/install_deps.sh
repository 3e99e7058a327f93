#!/usr/bin/env bash
# Installs what Tessera needs on Debian 12, and with options what its tests, example apps and
# benchmarks need besides:
#  * Debian packages: by default only those that building and running `tessera` needs
#    (compilers, MPI, HDF5, oneDNN, OpenBLAS, hwloc, JSON, CLI11);
#  * Kokkos + Kokkos Kernels 3.4.1 (Serial + OpenMP, or CUDA with --cuda), built from Debian's
#    Trilinos 13.2 *source* package into a fixed prefix outside the repository (default
#    /opt/tessera-deps/<variant>);
#  * --for-tests: what only the tests use (Catch2, h5diff, flake8, ip/tc for the emulated
#    cluster, Slurm and munge for the batch-job tests, patchelf for the bundles, Fashion-MNIST,
#    Chromium to render `tessera report` pages, Python headers, pybind11, pytest, mpi4py and
#    PyTorch for the Python module and its tests, SimGrid for tessera-sim);
#  * --for-examples: what the example apps read besides their generated data (Fashion-MNIST);
#  * --for-perf: the PyTorch peer the benchmarks in perf/ time Tessera against (python3-torch);
#  * --for-python: what the Python module needs to build (Python headers, pybind11) and run
#    (numpy); mpi4py and PyTorch are optional for it (docs/python.md);
#  * --for-simulation: SimGrid, for tessera-sim (docs/simulation.md);
#  * --onednn3: oneDNN 3.x built from the next Debian release's (trixie's) onednn *source*
#    package, only the primitives Tessera uses, into /opt/tessera-deps/onednn3 (--prefix DIR:
#    DIR/onednn3): the second oneDNN API the backend is built and tested against (the onednn3
#    preset; Debian 12 ships 2.6).
# Idempotent: a second run finds the stamp files and returns in seconds.
#
# Usage: scripts/install_deps.sh [--cuda] [--for-tests] [--for-examples] [--for-perf] [--for-python]
#                                [--for-simulation] [--onednn3]
#                                [--prefix DIR] [--jobs N] [--no-apt]
set -euo pipefail

variant=openmp
prefix_root=${TESSERA_DEPS_ROOT:-/opt/tessera-deps}
jobs=$(nproc)
do_apt=1
for_tests=0
for_examples=0
for_perf=0
for_python=0
for_simulation=0
onednn3=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cuda) variant=cuda ;;
    --prefix) prefix_root=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --no-apt) do_apt=0 ;;
    --for-tests) for_tests=1 ;;
    --for-examples) for_examples=1 ;;
    --for-perf) for_perf=1 ;;
    --for-python) for_python=1 ;;
    --for-simulation) for_simulation=1 ;;
    --onednn3) onednn3=1 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install_deps.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

prefix=$prefix_root/$variant
src_root=$prefix_root/src
# A stamp holds the options a dependency was built with; different options rebuild it.
up_to_date() { [[ -f $1 ]] && [[ "$(cat "$1")" == "$2" ]]; }
log() { printf '[install_deps %(%H:%M:%S)T] %s\n' -1 "$*"; }
sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

# What building and running `tessera` needs, and nothing else: the quick start installs these.
apt_packages=(
  build-essential cmake ninja-build ccache pkg-config
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libdnnl-dev ocl-icd-opencl-dev libopenblas-dev libhwloc-dev
  nlohmann-json3-dev libcli11-dev zlib1g-dev
)
test_packages=(
  catch2 python3
  # the U-Net example test reads the files `tessera predict` writes
  python3-h5py
  # h5diff compares the files datagen writes on 1 and 3 ranks
  hdf5-tools
  # scripts/check_spack_recipe.py checks package.py with Spack's own style settings
  flake8
  # ip and tc, with which scripts/cluster.sh makes the emulated nodes of the cluster tests
  iproute2
  # a real Slurm on those nodes (scripts/slurm_cluster.sh, the slurm tests): its daemons are
  # started by that script with configs of its own; the services the packages install on a
  # systemd machine find no /etc/slurm/slurm.conf and stay down
  slurmctld slurmd slurm-client munge
  # the relocatable bundles (scripts/gpu_bundle.sh): rpaths rewritten, the pack compressed
  patchelf xz-utils
  # headless Chromium renders `tessera report` pages in the report tests (about 20 s to install)
  chromium fonts-dejavu-core
  # the real images the Fashion-MNIST reader and the ResNet/BCPNN example tests read
  dataset-fashion-mnist
  # the Python module (python/) and its tests: headers, pybind11, pytest, mpi4py for the
  # multi-rank cases, and PyTorch for the export tests (the perf peer's package)
  python3-dev pybind11-dev python3-numpy python3-pytest python3-mpi4py python3-torch
  # SimGrid, with which tessera-sim replays planned steps on modelled networks (sim/)
  libsimgrid-dev
)
# the images of examples/resnet and examples/bcpnn, imported by `tessera datagen fashion-mnist`
example_packages=(dataset-fashion-mnist)
# the PyTorch peer of perf/ (perf/common.sh); hundreds of MB, so never installed by default
perf_packages=(python3-torch python3-numpy)
# the Python module (python/): built where these are found, imported with numpy
python_packages=(python3-dev pybind11-dev python3-numpy)
# tessera-sim (sim/): built where SimGrid is found
simulation_packages=(libsimgrid-dev)

# deb-src entries mirror the machine's own apt sources (deb822 *.sources and one-line
# sources.list), so no host is ever written down here.
write_deb_src() {
  local out=/etc/apt/sources.list.d/tessera-deb-src.sources
  [[ -f $out ]] && return 0
  local tmp; tmp=$(mktemp)
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ $f == "$out" ]] && continue
    # Keep only stanzas whose Types include deb; rewrite them as deb-src.
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         { n = split($0, lines, "\n"); keep = 0
           for (i = 1; i <= n; i++) if (lines[i] ~ /^Types:/ && lines[i] ~ /[ \t]deb([ \t]|$)/) keep = 1
           if (keep) { sub(/Types:[^\n]*/, "Types: deb-src"); print } }' "$f" >>"$tmp"
  done
  if [[ -f /etc/apt/sources.list ]]; then
    grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list | sed -E 's/^([[:space:]]*)deb([[:space:]])/\1deb-src\2/' \
      >"${tmp}.list" || true
    [[ -s ${tmp}.list ]] && sudo_if_needed cp "${tmp}.list" /etc/apt/sources.list.d/tessera-deb-src.list
  fi
  if [[ -s $tmp ]]; then sudo_if_needed cp "$tmp" "$out"; fi
  rm -f "$tmp" "${tmp}.list"
}

if [[ $do_apt -eq 1 ]]; then
  missing=()
  [[ $for_tests -eq 1 ]] && apt_packages+=("${test_packages[@]}")
  [[ $for_examples -eq 1 ]] && apt_packages+=("${example_packages[@]}")
  [[ $for_perf -eq 1 ]] && apt_packages+=("${perf_packages[@]}")
  [[ $for_python -eq 1 ]] && apt_packages+=("${python_packages[@]}")
  [[ $for_simulation -eq 1 ]] && apt_packages+=("${simulation_packages[@]}")
  [[ $onednn3 -eq 1 ]] && apt_packages+=(xz-utils)  # trixie's onednn source is a .tar.xz
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    sudo_if_needed apt-get update -qq
    sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "Debian packages already installed"
  fi
fi

# --- Kokkos + Kokkos Kernels from the Trilinos 13.2 source package -------------------
fetch_trilinos_source() {
  local dest=$src_root
  if [[ -d $dest/kokkos && -d $dest/kokkos-kernels ]]; then return 0; fi
  mkdir -p "$dest/download"
  if ! ls "$dest"/download/trilinos_*.orig.tar.* >/dev/null 2>&1; then
    write_deb_src
    sudo_if_needed apt-get update -qq
    log "downloading the Trilinos source package"
    (cd "$dest/download" && apt-get source --download-only trilinos >/dev/null)
  fi
  local tarball; tarball=$(ls "$dest"/download/trilinos_*.orig.tar.* | head -n1)
  log "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$tarball")"
  local top; top=$( (tar tf "$tarball" || true) | head -n1 | cut -d/ -f1)
  tar xf "$tarball" -C "$dest" --wildcards "$top/packages/kokkos/*" "$top/packages/kokkos-kernels/*"
  mv "$dest/$top/packages/kokkos" "$dest/kokkos"
  mv "$dest/$top/packages/kokkos-kernels" "$dest/kokkos-kernels"
  rm -rf "${dest:?}/$top"
  # CUDA 13 fixes are applied to a copy at build time, so the pristine tree serves both variants.
}

build_kokkos() {
  local src=$src_root/kokkos build=$prefix_root/build/kokkos-$variant
  local -a opts=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17
                 -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_RPATH="$prefix/lib" -DKokkos_ENABLE_TESTS=OFF
                 -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
  if [[ $variant == cuda ]]; then
    src=$src_root/kokkos-cuda
    opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON
           -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper")
    export NVCC_WRAPPER_DEFAULT_COMPILER=${CXX:-g++}
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  # The CUDA variant's stamp names the patch too, so a changed patch rebuilds Kokkos.
  local signature="${opts[*]}"
  [[ $variant == cuda ]] && signature+=" patch: $(sha256sum "$(dirname "$0")/patch_kokkos_cuda13.sh" | cut -c1-16)"
  up_to_date "$prefix/.kokkos.stamp" "$signature" && { log "Kokkos ($variant) already in $prefix"; return 0; }
  if [[ $variant == cuda ]]; then
    rm -rf "$src"; cp -rp "$src_root/kokkos" "$src"  # -p: installed files keep their times
    "$(dirname "$0")/patch_kokkos_cuda13.sh" "$src"
  fi
  log "building Kokkos 3.4.1 ($variant)"
  # An existing build tree is reused: unchanged generated headers keep their timestamps, so
  # a link-only change does not make Kokkos Kernels recompile.
  cmake -S "$src" -B "$build" -G Ninja "${opts[@]}" >"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
  cmake --build "$build" -j "$jobs" >>"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
  cmake --install "$build" >>"$build.log" 2>&1
  printf '%s\n' "$signature" >"$prefix/.kokkos.stamp"
}

build_kokkos_kernels() {
  local build=$prefix_root/build/kokkos-kernels-$variant
  local cxx=${CXX:-g++}
  [[ $variant == cuda ]] && cxx=$prefix/bin/nvcc_wrapper
  local -a opts=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_COMPILER="$cxx"
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_RPATH="$prefix/lib" -DKokkos_ROOT="$prefix"
    -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_DOUBLE=OFF
    -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
    -DKokkosKernels_INST_LAYOUTRIGHT=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF
    -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF
    -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_TPL_BLAS=ON
    # The BLAS symbols' Fortran names as GCC and OpenBLAS spell them (sgemm_). Given, Kokkos
    # Kernels need not enable Fortran to find out, so no Fortran compiler is installed.
    "-DF77_BLAS_MANGLE=(name,NAME) name ## _")
  if [[ $variant == cuda ]]; then
    opts+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON)
    export NVCC_WRAPPER_DEFAULT_COMPILER=${CXX:-g++}
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  local signature="${opts[*]} kokkos: $(cat "$prefix/.kokkos.stamp")"
  up_to_date "$prefix/.kokkos-kernels.stamp" "$signature" && { log "Kokkos Kernels ($variant) already in $prefix"; return 0; }
  # No explicit instantiation: Tessera's few KokkosBlas calls instantiate from the headers and
  # still reach the vendor BLAS through the TPL specialisations. Measured here, float ETI took
  # 20+ minutes on 2 cores, and with both layouts its library references mixed-layout
  # instances that no ETI option generates (undefined symbols at link time).
  log "building Kokkos Kernels 3.4.1 ($variant, BLAS TPL, no ETI)"
  # Reuse an existing build tree: when only link options changed, that is a relink.
  cmake -S "$src_root/kokkos-kernels" -B "$build" -G Ninja "${opts[@]}" >"$build.log" 2>&1 \
    || { tail -n 40 "$build.log"; exit 1; }
  cmake --build "$build" -j "$jobs" >>"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
  cmake --install "$build" >>"$build.log" 2>&1
  printf '%s\n' "$signature" >"$prefix/.kokkos-kernels.stamp"
}

# --- oneDNN 3.x from the next Debian release's source package (--onednn3) -------------
# Only the source is taken from trixie, through a private apt state under $src_root, so the
# machine's own apt sources and packages stay bookworm's.
onednn3_apt() {
  local dir=$src_root/apt-trixie
  local -a opts=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                 -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache")
  # As root, apt would hand the download to its _apt user, who cannot write here.
  [[ $(id -u) -eq 0 ]] && opts+=(-o APT::Sandbox::User=root)
  apt-get "${opts[@]}" "$@"
}

fetch_onednn3_source() {
  local dest=$src_root/onednn3 dir=$src_root/apt-trixie
  if ls "$dest"/onednn_*.orig.tar.* >/dev/null 2>&1; then return 0; fi
  mkdir -p "$dest" "$dir/lists/partial" "$dir/cache/archives/partial"
  # The Debian mirror this machine already uses (the URI of its bookworm main suite).
  local codename uri
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" 'BEGIN { RS = "" }
        { u = ""; ok = 0; n = split($0, l, "\n")
          for (i = 1; i <= n; i++) { if (l[i] ~ /^URIs:/) u = l[i]; if (l[i] ~ /^Suites:/ && (" " l[i] " ") ~ (" " c " ")) ok = 1 }
          if (ok && u != "") { sub(/^URIs:[ \t]*/, "", u); split(u, w, /[ \t]+/); print w[1]; exit } }')
  [[ -z $uri && -f /etc/apt/sources.list ]] &&
    uri=$(awk -v c="$codename" '$1 == "deb" && $3 == c { print $2; exit }' /etc/apt/sources.list)
  [[ -n $uri ]] || { echo "install_deps.sh: no Debian $codename mirror in the apt sources to take trixie's onednn source from" >&2; exit 1; }
  printf 'deb-src %s trixie main\n' "$uri" >"$dir/sources.list"
  log "downloading Debian trixie's onednn source package from $uri"
  onednn3_apt update -qq
  (cd "$dest" && onednn3_apt source --download-only onednn >/dev/null)
}

build_onednn3() {
  local dest=$src_root/onednn3 install=$prefix_root/onednn3 build=$prefix_root/build/onednn3
  local tarball; tarball=$(ls "$dest"/onednn_*.orig.tar.* | head -n1)
  # OpenMP like Debian's 2.6; no graph API, tests or examples; the primitives of
  # backends/onednn only (reorder is always needed); every CPU ISA, so that the JIT kernels
  # chosen are those of a full build. Host code at -O1: this build tests the API, and -O1
  # halves its compile time against oneDNN's -O3 (measured on the heaviest file, 18 against
  # 36 s), while the convolutions' JIT kernels are generated at run time whatever the level.
  local -a opts=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$install" -DCMAKE_INSTALL_LIBDIR=lib
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" -DONEDNN_ARCH_OPT_FLAGS=-O1
    -DONEDNN_CPU_RUNTIME=OMP -DONEDNN_GPU_RUNTIME=NONE -DONEDNN_BUILD_GRAPH=OFF -DONEDNN_BUILD_TESTS=OFF
    -DONEDNN_BUILD_EXAMPLES=OFF -DONEDNN_BUILD_DOC=OFF -DONEDNN_ENABLE_JIT_PROFILING=OFF
    -DONEDNN_ENABLE_ITT_TASKS=OFF "-DONEDNN_ENABLE_PRIMITIVE=CONVOLUTION;ELTWISE;INNER_PRODUCT;POOLING;REORDER")
  local signature="$(basename "$tarball") ${opts[*]}"
  up_to_date "$install/.onednn.stamp" "$signature" && { log "oneDNN 3.x already in $install"; return 0; }
  local top; top=$( (tar tf "$tarball" || true) | head -n1 | cut -d/ -f1)
  rm -rf "${dest:?}/$top"
  tar xf "$tarball" -C "$dest"
  log "building oneDNN from $(basename "$tarball") (5 primitives, all CPU ISAs, -O1)"
  cmake -S "$dest/$top" -B "$build" -G Ninja "${opts[@]}" >"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
  cmake --build "$build" -j "$jobs" >>"$build.log" 2>&1 || { tail -n 40 "$build.log"; exit 1; }
  cmake --install "$build" >>"$build.log" 2>&1
  rm -rf "${dest:?}/$top"
  printf '%s\n' "$signature" >"$install/.onednn.stamp"
}

mkdir -p "$prefix" "$prefix_root/build"
fetch_trilinos_source
build_kokkos
build_kokkos_kernels
if [[ $onednn3 -eq 1 ]]; then
  fetch_onednn3_source
  build_onednn3
  log "oneDNN 3.x ready in $prefix_root/onednn3 (the onednn3 preset)"
fi
log "dependencies ready in $prefix (pass -DCMAKE_PREFIX_PATH=$prefix to CMake)"
