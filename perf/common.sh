# Sourced by the CPU benchmark scripts in perf/ (run from the repository root).

# A failing run inside $(...) must stop the script, not leave an empty figure behind.
shopt -s inherit_errexit

# build_perf DIR TARGET...: the benchmark build (Release, oneDNN, HDF5, perf programs, no
# tests) in DIR, the same for every script so they share one build directory.
build_perf() {
  local dir=$1
  shift
  export CCACHE_DIR=${CCACHE_DIR:-/opt/tessera-deps/ccache}
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/tessera-deps/openmp \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DTESSERA_ENABLE_ONEDNN=ON -DTESSERA_ENABLE_HDF5=ON \
    -DTESSERA_ENABLE_PERF=ON -DTESSERA_ENABLE_TESTS=OFF >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target "$@" >/dev/null
}

# Open MPI on one machine: more ranks than cores, and CI runs as root.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
