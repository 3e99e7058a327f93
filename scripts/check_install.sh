#!/usr/bin/env bash
# Installs the default build into build/install, then builds examples/cpp against it through
# find_package(Tessera) alone, as a user's project would, and runs it at a small size: it
# builds a model with the C++ API, trains it, and fails unless its validation loss is at least
# 1.3 times below that of predicting the mean (measured: 1.75 times).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --install build/default >/dev/null
rm -rf build/cpp_example
cmake -S examples/cpp -B build/cpp_example -G Ninja \
  -DCMAKE_PREFIX_PATH="$PWD/build/install;/opt/tessera-deps/openmp" >/dev/null
cmake --build build/cpp_example >/dev/null
build/cpp_example/tessera_cpp_example --size 8 --samples 512 --epochs 2 --require-ratio 1.3 --quiet --kokkos-disable-warnings
echo "find_package(Tessera) consumer (examples/cpp): OK"
