# Sourced by the CPU benchmark scripts in perf/ (run from the repository root).

# A failing run inside $(...) must stop the script, not leave an empty figure behind.
shopt -s inherit_errexit

# build_perf DIR TARGET...: the benchmark build (Release, oneDNN, HDF5, perf programs, no
# tests; the Python module for $TESSERA_PYTHON, default Debian's /usr/bin/python3) in DIR, the
# same for every script so they share one build directory.
build_perf() {
  local dir=$1
  shift
  source scripts/ccache_env.sh
  # A build folder that exists keeps its tests (--build build/default must not lose them); a
  # new one is made without.
  local tests=(-DTESSERA_ENABLE_TESTS=OFF)
  [[ -f $dir/CMakeCache.txt ]] && tests=()
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/tessera-deps/openmp \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DTESSERA_ENABLE_ONEDNN=ON -DTESSERA_ENABLE_HDF5=ON \
    -DTESSERA_ENABLE_PERF=ON "${tests[@]}" -DPython3_EXECUTABLE="${TESSERA_PYTHON:-/usr/bin/python3}" >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target "$@" >/dev/null
}

# peer_and_tessera SCRIPT: checks that $TESSERA_PEER_PYTHON (default /usr/bin/python3, Debian's
# python3-torch) imports torch, setting peer_python; builds the perf tessera into $build unless
# $tessera names one; then sets the peers' threads from $threads and makes $work, a scratch
# folder removed on exit. What every script timing Tessera against a PyTorch peer does first.
peer_and_tessera() {
  peer_python=${TESSERA_PEER_PYTHON:-/usr/bin/python3}
  "$peer_python" -c 'import torch' 2>/dev/null ||
    { echo "$1: $peer_python cannot import torch (scripts/install_deps.sh --for-perf installs Debian's python3-torch; or set TESSERA_PEER_PYTHON)" >&2; exit 1; }
  if [[ -z $tessera ]]; then
    build_perf "$build" tessera_cli
    tessera=$build/tessera
  fi
  export OMP_NUM_THREADS=$threads OMP_PROC_BIND=false
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# fashion_mnist_runs: builds the perf tessera into $build unless $tessera names one, imports
# Fashion-MNIST (Debian's dataset-fashion-mnist) into data/fashion-mnist if missing, and makes
# $work a scratch folder removed on exit unless it names one (kept). What the scripts that
# train on Fashion-MNIST (large_batch.sh, bcpnn.sh) do first.
fashion_mnist_runs() {
  if [[ -z $tessera ]]; then
    build_perf "$build" tessera_cli
    tessera=$build/tessera
  fi
  if [[ ! -f data/fashion-mnist/train.h5 || ! -f data/fashion-mnist/test.h5 ]]; then
    "$tessera" datagen fashion-mnist -o data/fashion-mnist
  fi
  if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work"
}

# cluster_runs SCRIPT: checks that scripts/cluster.sh can make an emulated cluster here (root,
# namespaces), builds the perf tessera into $build unless $tessera names one and makes it an
# absolute path (the nodes start it from their own working directory), runs one thread per rank,
# and makes $work a scratch folder removed on exit unless $keep names one. What the scripts
# timing runs on the emulated cluster (cluster.sh, heterogeneous.sh) do first.
cluster_runs() {
  if ! reason=$(scripts/cluster.sh check); then
    echo "perf/$1: $reason" >&2
    exit 1
  fi
  if [[ -z $tessera ]]; then
    build_perf "$build" tessera_cli
    tessera=$build/tessera
  fi
  tessera=$(readlink -f "$tessera")
  export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
  if [[ -n $keep ]]; then
    work=$keep
  else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
  fi
}

# Open MPI on one machine: more ranks than cores, and CI runs as root.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
