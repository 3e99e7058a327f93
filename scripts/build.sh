#!/usr/bin/env bash
# Configures and builds Tessera with a CMake preset (default: "default", the CPU build).
# Usage: scripts/build.sh [PRESET]   (the dependencies must be installed: scripts/install_deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
jobs=${TESSERA_BUILD_JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-/opt/tessera-deps/ccache}
export CCACHE_BASEDIR=$PWD
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
