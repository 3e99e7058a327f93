#!/usr/bin/env bash
# The flood-filling-network app (examples/ffn/README.md) against its baselines on synthetic EM
# volumes (`tessera datagen cells`, 48³): the FFN trained on one rank (--steps steps of 8 FOVs)
# and data-parallel on two (half the steps of 16 FOVs, square-root learning-rate scaling), each
# flood-filling the 4 held-out volumes; the connected components of a U-Net's thresholded
# interior map (the best of thresholds 0.5–0.9); the components of the true interior with 2%
# of its voxels flipped. Every run's settings are in perf/ffn.py.
# Usage: perf/ffn.sh [--steps N] [--threads N] [--work DIR] [--build DIR | --tessera PATH]
#   --steps: 1-rank FFN training steps (default 10000); --work: keep configs, logs and outputs
# About 25 minutes on 2 idle cores (the 1-rank FFN's part, U-Net and segmentation included,
# about 14). Last line:
#   ffn_vi=V components_vi=V vi_2ranks_vs_1=R throughput_per_rank_2vs1=R
# (VI: variation of information in bits, split + merge, mean over the held-out volumes, lower is
# better; vi_2ranks_vs_1: the 2-rank FFN's VI over the 1-rank one's; throughput_per_rank_2vs1:
# FOVs per second per rank at 2 ranks over 1 rank, each rank on one thread).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" threads=2 work=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) args+=("$1" "$2"); shift ;;
    --threads) threads=$2; shift ;;
    --work) work=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ffn.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
if [[ -z $work ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
python3 perf/ffn.py --tessera "$tessera" --work "$work" --threads "$threads" "${args[@]}"
