#!/usr/bin/env bash
# Installs the dependencies, builds Tessera, and trains the built-in example end to end: a
# small 3D CNN that learns the four parameters behind synthetic cosmology-like volumes, read
# from HDF5 files that `tessera datagen cosmoflow` writes first (one file per sample, as
# CosmoFlow ships its data), then writes a run report to look at (runs/cosmoflow_tiny.html).
# Extra arguments go to `tessera train` (e.g. --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# Only the program the example runs: the tests are the test command's (scripts/test.sh), and
# so are their dependencies.
scripts/build.sh --without-tests default tessera_cli
mkdir -p runs
build/default/tessera datagen cosmoflow --output runs/cosmoflow_tiny_data --size 16 --samples 1024 \
  --validation-samples 128 --no-progress
build/default/tessera train examples/hdf5/cosmoflow_tiny.json --metrics runs/cosmoflow_tiny.metrics.jsonl \
  --checkpoint runs/cosmoflow_tiny.ckpt "$@"
build/default/tessera report runs/cosmoflow_tiny.metrics.jsonl --output runs/cosmoflow_tiny.html \
  --title "Tessera quick start: cosmoflow_tiny"
echo "open runs/cosmoflow_tiny.html in a browser to see the run"
