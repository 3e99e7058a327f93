#!/usr/bin/env bash
# The BCPNN app (examples/bcpnn/README.md) on Fashion-MNIST (Debian's data, imported into
# data/fashion-mnist if missing): examples/bcpnn/bcpnn_fashion_mnist.json trained on one rank,
# the same dense read-out trained on the raw pixels (the baseline BCPNN features must beat),
# the BCPNN run on two ranks with the same global batch, and the BCPNN run in bf16, with its
# traces in fp32 and in bf16. Every run's settings are in perf/bcpnn.py.
# Usage: perf/bcpnn.sh [--local-epochs N] [--readout-epochs M] [--threads N] [--no-bf16]
#                      [--work DIR] [--build DIR | --tessera PATH]
#   --work: keep each run's config, console output and metrics log in DIR
# About 15 minutes on 2 idle cores at the example's epochs. Last line:
#   test_accuracy=A raw_readout_accuracy=A epoch_seconds=S ranks2_vs_1=R
#   [bf16_accuracy=A bf16_traces_accuracy=A]
# (test accuracies in %; epoch_seconds: the first local-learning epoch, one pass over the
# 60,000 training images; ranks2_vs_1: the 2-rank run's test accuracy over the 1-rank run's).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" threads=2 work=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --local-epochs|--readout-epochs) args+=("$1" "$2"); shift ;;
    --no-bf16) args+=("$1") ;;
    --threads) threads=$2; shift ;;
    --work) work=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bcpnn.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
fashion_mnist_runs
python3 perf/bcpnn.py --tessera "$tessera" --work "$work" --threads "$threads" "${args[@]}"
