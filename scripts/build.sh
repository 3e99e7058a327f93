#!/usr/bin/env bash
# Configures and builds Tessera with a CMake preset (default: "default", the CPU build).
# Usage: scripts/build.sh [PRESET [TARGET...]]   (the dependencies must be installed:
# scripts/install_deps.sh). TARGETs: build only those (the quick start builds tessera_cli, the
# `tessera` program, not the tests); none: everything the preset enables.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
targets=("${@:2}")
jobs=${TESSERA_BUILD_JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-/opt/tessera-deps/ccache}
export CCACHE_BASEDIR=$PWD
cmake --preset "$preset" >/dev/null
if [[ ${#targets[@]} -gt 0 ]]; then
  cmake --build --preset "$preset" -j "$jobs" --target "${targets[@]}"
else
  cmake --build --preset "$preset" -j "$jobs"
fi
