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
if ! reason=$(scripts/cluster.sh check); then
  echo "perf/heterogeneous.sh: $reason" >&2
  exit 1
fi
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
tessera=$(readlink -f "$tessera")
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
if [[ -n $keep ]]; then
  work=$keep
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
/usr/bin/python3 perf/heterogeneous.py "$tessera" "$work" "${args[@]}"
