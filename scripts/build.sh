#!/usr/bin/env bash
# Configures and builds Tessera with a CMake preset (default: "default", the CPU build).
# Usage: scripts/build.sh [--without-tests] [PRESET [TARGET...]]   (the dependencies must be
# installed: scripts/install_deps.sh). TARGETs: build only those (the quick start builds
# tessera_cli, the `tessera` program, not the tests); none: everything the preset enables.
# --without-tests configures without the test suite, so that Catch2, which only the tests use,
# need not be installed (the quick start's case); the next configure without it, by this
# script or the test command, turns the tests back on as the preset says.
set -euo pipefail
cd "$(dirname "$0")/.."
configure_args=()
if [[ ${1:-} == --without-tests ]]; then
  configure_args+=(-DTESSERA_ENABLE_TESTS=OFF)
  shift
fi
preset=${1:-default}
targets=("${@:2}")
jobs=${TESSERA_BUILD_JOBS:-$(nproc)}
source scripts/ccache_env.sh
cmake --preset "$preset" "${configure_args[@]}" >/dev/null
if [[ ${#targets[@]} -gt 0 ]]; then
  cmake --build --preset "$preset" -j "$jobs" --target "${targets[@]}"
else
  cmake --build --preset "$preset" -j "$jobs"
fi
