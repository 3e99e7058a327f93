#!/usr/bin/env bash
# Installs the dependencies, builds Tessera, and trains the built-in example end to end: a
# small 3D CNN that learns the four parameters behind synthetic cosmology-like volumes.
# Extra arguments go to `tessera train` (e.g. --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh default
mkdir -p runs
exec build/default/tessera train examples/cosmoflow_tiny.json --metrics runs/cosmoflow_tiny.metrics.jsonl \
  --checkpoint runs/cosmoflow_tiny.ckpt "$@"
