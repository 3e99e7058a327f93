#!/usr/bin/env bash
# The test command. With no option, what a newcomer needs to trust the build just made: it
# installs the dependencies (with those of the tests), builds Tessera and its tests, runs the
# whole CPU suite, checks the Spack recipe, then installs Tessera and builds and runs
# examples/cpp against it with find_package(Tessera) (README: about 14 minutes cold on 2 cores).
#
# With --all (what CI runs, .ci/run), it goes on to the builds a release needs besides: it packs
# the CPU build as a relocatable bundle and runs it with this machine's libraries hidden
# (docs/gpu.md), builds Tessera against oneDNN 3.x too (Debian 12 ships 2.6) and runs the suite
# on that build, and, where the CUDA toolkit is installed, builds the CUDA configuration (Kokkos
# CUDA for Ampere80: the library, tessera and the GPU test subset, docs/gpu.md), checks its
# bundle the same way and, if a GPU is visible, runs those tests there too.
# With TESSERA_TEST_SANITIZE=1 (and --all) it also runs the tests of the input readers under
# ASan+UBSan (scripts/sanitize.sh).
# Other arguments go to ctest (e.g. -L unit, -R conv).
# At the end of every run, passed or not, it lists each test that was skipped and why
# (scripts/report_skips.py over the JUnit files the ctest runs write).
#
# Usage: scripts/test.sh [--all] [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$arg") ;;
  esac
done
set -- "${ctest_args[@]}"
suites=()
report_skips() { ((${#suites[@]})) && python3 scripts/report_skips.py "${suites[@]}" || true; }
trap report_skips EXIT
# suite PRESET [ctest args]: runs that test preset, its results in build/PRESET/junit.xml.
suite() {
  local preset=$1; shift
  rm -f "build/$preset/junit.xml"
  suites+=("$preset=build/$preset/junit.xml")
  TESSERA_REQUIRE=${require:-} ctest --preset "$preset" --output-junit junit.xml "$@"
}
scripts/install_deps.sh --for-tests
scripts/build.sh default
# What this script's own install guarantees: a test case that skips itself for want of one of
# these fails instead (tests/support/skip.hpp), so a green run means they all ran.
require=hwloc,host-build,chromium
[[ -z ${OPENBLAS_NUM_THREADS:-} ]] && require+=,openblas
# Whether the multi-node tests (ctest -L cluster) can make their emulated nodes here; where they
# cannot, they skip with this reason (docs/cluster.md).
scripts/cluster.sh check || true
# The batch-job tests (ctest -L slurm) run a real Slurm on those nodes: required wherever it can
# start, so that a green run there means they ran; skipped with the reason elsewhere.
if scripts/slurm_cluster.sh check; then require+=,slurm; fi
suite default "$@"
# The Spack recipe against CMakeLists.txt (no Spack needed); here rather than only in ctest so
# that a missing flake8 fails CI instead of being skipped.
python3 scripts/check_spack_recipe.py
scripts/check_install.sh
if [[ $all -eq 0 ]]; then
  echo "The CPU build passed. scripts/test.sh --all (what CI runs) adds the bundles, the oneDNN 3.x"
  echo "build and the CUDA build."
  exit 0
fi
# The relocatable bundle a GPU machine gets (docs/gpu.md), shown to run with this machine's
# libraries hidden.
scripts/gpu_bundle.sh --variant cpu --no-build --no-pack
scripts/check_bundle.sh build/bundle/cpu
# The oneDNN backend is one source for the 2.x and 3.x APIs (backends/onednn/src/dnnl_compat.hpp):
# the suite above ran it on Debian's 2.6, this runs the unit tests on 3.x, built once from Debian
# trixie's source package and then cached in /opt/tessera-deps/onednn3.
echo "== oneDNN 3.x"
scripts/install_deps.sh --onednn3 --no-apt
scripts/build.sh onednn3
# oneDNN 3.7's AVX-512 backward-data kernel for convolutions with one input channel
# (jit:avx512_core, as this project calls it) disagrees with the Kokkos reference and with
# oneDNN 2.6 on the same machine (relative error 0.2-1.0, varying with the thread count); it was
# first seen on an AVX-512 CPU in 2026-12, the earlier CI machines having no AVX-512. Not fixed
# yet: this stage checks the 3.x API, so it runs oneDNN 3 on its AVX2 kernels (the default
# suite above runs oneDNN 2.6's AVX-512 ones). ONEDNN_MAX_CPU_ISA set by the caller wins.
echo "oneDNN 3.x runs capped at ${ONEDNN_MAX_CPU_ISA:=AVX2} (see the comment in scripts/test.sh)"
ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA suite onednn3 "$@"
if [[ ${TESSERA_TEST_SANITIZE:-0} == 1 ]]; then
  # Off by default: even this subset needs the whole library built with ASan, about as long as
  # the default build (README, "Sanitizers"); the full runs are scripts/sanitize.sh asan|tsan.
  echo "== ASan+UBSan: the input readers (core, io, model, train, cli)"
  TESSERA_SANITIZE_TARGETS="tessera_tests_core tessera_tests_io tessera_tests_model tessera_tests_train tessera_cli" \
    scripts/sanitize.sh asan -R '^(core|io|model|train|cli):'
fi
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "== CUDA configuration"
  scripts/install_deps.sh --cuda --no-apt
  scripts/build.sh cuda
  scripts/gpu_bundle.sh --variant cuda --no-build --no-pack
  scripts/check_bundle.sh build/bundle/cuda
  if nvidia-smi -L >/dev/null 2>&1; then
    require='' suite cuda "$@"
  else
    echo "CUDA build compiled; no GPU visible here, so its tests were not run"
    suites+=("cuda=not run: the CUDA build compiled, but no GPU is visible here")
  fi
fi
