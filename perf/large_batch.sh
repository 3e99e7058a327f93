#!/usr/bin/env bash
# The batch-size study (examples/resnet/README.md, "Large batches"): ResNet-8 on Fashion-MNIST
# (Debian's data, imported into data/fashion-mnist if missing) for the same number of epochs at
# global batches from 64 to 8192, with momentum SGD and linear learning-rate scaling, SGD whose
# two ranks' gradients are combined by Adasum, LARS and LAMB with square-root scaling; batches
# above the micro-batch run by gradient accumulation ("training.accumulate"), so the whole
# study fits 2 cores. The adaptive methods' base rate is the best of a small grid at the
# largest batch. Every run's settings are in perf/large_batch.py.
# Usage: perf/large_batch.sh [--epochs N] [--batches "64,512,2048,8192"] [--micro-batch M]
#                            [--lars-lrs "2,4,8,16"] [--lamb-lrs "0.01,0.02,0.04,0.08,0.16"] [--threads N]
#                            [--svg FILE] [--work DIR] [--build DIR | --tessera PATH]
#   --work: keep each run's config and metrics log in DIR (default: a temporary folder), and
#           reuse the runs that finished there with the same settings (a study resumed)
# About an hour on 2 idle cores at the defaults (5 epochs, 20 runs of 3 minutes). Last line:
#   largest_batch=B sgd64_accuracy=A best_adaptive_accuracy=A best_adaptive=M
#   sgd_large_accuracy=A adasum_large_accuracy=A gap_points=G
# (test accuracy in %, -1 for a run that diverged; gap_points: sgd64 minus the best adaptive).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" threads=2 work=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs|--batches|--micro-batch|--lars-lrs|--lamb-lrs|--svg|--methods) args+=("$1" "$2"); shift ;;
    --threads) threads=$2; shift ;;
    --work) work=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "large_batch.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
fashion_mnist_runs
python3 perf/large_batch.py --tessera "$tessera" --work "$work" --threads "$threads" "${args[@]}"
