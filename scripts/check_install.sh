#!/usr/bin/env bash
# Installs the default build into build/install and builds and runs tests/install/consumer,
# a project that uses Tessera only through find_package(Tessera).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --install build/default >/dev/null
rm -rf build/consumer
cmake -S tests/install/consumer -B build/consumer -G Ninja \
  -DCMAKE_PREFIX_PATH="$PWD/build/install;/opt/tessera-deps/openmp" >/dev/null
cmake --build build/consumer >/dev/null
build/consumer/tessera_consumer
echo "find_package(Tessera) consumer: OK"
