#!/usr/bin/env bash
# Measured balance against even shares on an emulated cluster of 2 nodes (scripts/cluster.sh,
# as root), one held to half of its core: cosmoflow-small, 2 ranks, the same global batch (24).
# perf/heterogeneous.py defines each figure. Target: balanced_vs_even >= 0.85 of ideal.
# Usage: perf/heterogeneous.sh [--runs R] [--steps N] [--size S] [--batch B] [--share F]
#                              [--keep DIR] [--build DIR | --tessera PATH]
# Last line: balanced_vs_even=… ideal=… fraction_of_ideal=… shares=… s0=… s1=…
#            rebalance_bytes=… rebalance_decision_s=… rebalance_step_extra_s=…
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" keep="" args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs|--steps|--size|--batch|--share) args+=("$1" "$2"); shift ;;
    --keep) keep=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "heterogeneous.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
cluster_runs heterogeneous.sh
/usr/bin/python3 perf/heterogeneous.py "$tessera" "$work" "${args[@]}"
