#!/usr/bin/env bash
# Installs the dependencies, builds Tessera, runs the whole test suite, then installs Tessera
# and builds a small consumer project against it with find_package(Tessera).
# Extra arguments go to ctest (e.g. -L unit, -R conv).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh default
ctest --preset default "$@"
scripts/check_install.sh
