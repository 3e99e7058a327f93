#!/usr/bin/env bash
# The performance model (`tessera plan`) against measured runs on this machine: predicted and
# measured median step time and peak memory per rank for cosmoflow-small and unet3d-small at
# two sizes, serial and under four 2-rank layouts (data, spatial, hybrid, the planner's), and
# memory at 4 and 8 ranks (oversubscribed); then how much slower the planner's layout ran
# than the fastest measured one. The machine is calibrated first (`tessera calibrate`).
# Details: perf/plan_accuracy.py, docs/plan.md ("Validation").
# Usage: perf/plan_accuracy.sh [--steps N] [--quick] [--build DIR]
# Last line: median_time_error=E max_time_error=M median_memory_error=R planner_regret=G
set -euo pipefail
cd "$(dirname "$0")/.."
steps=6 build=build/perf extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --quick) extra+=(--quick) ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "plan_accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 perf/plan_accuracy.py "$build/tessera" "$work" --steps "$steps" "${extra[@]}"
