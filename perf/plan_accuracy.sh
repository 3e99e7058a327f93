#!/usr/bin/env bash
# The performance model (`tessera plan`) against measured runs on this machine: predicted and
# measured median step time and peak memory per rank for cosmoflow-small and unet3d-small at
# two sizes, serial and under four 2-rank layouts (data, spatial, hybrid, the planner's), and
# memory at 4 and 8 ranks (oversubscribed); then how much slower the planner's layout ran
# than the fastest measured one. Calibration, planning and measurement are interleaved over R
# rounds (medians kept, spreads printed), so a host that slows down for a while does not skew
# one layout. With --cluster MBIT the 2-rank runs go through an emulated cluster of 2 nodes
# with links of MBIT Mbit/s (scripts/cluster.sh, root; perf/cluster.sh prints the bandwidth
# that matches a real machine).
# Details: perf/plan_accuracy.py, docs/plan.md ("Validation").
# Usage: perf/plan_accuracy.sh [--steps N] [--rounds R] [--quick] [--cluster MBIT]
#                              [--build DIR | --tessera PATH]
# Last line: median_time_error=E max_time_error=M median_memory_error=R planner_regret=G
set -euo pipefail
cd "$(dirname "$0")/.."
steps=6 build=build/perf extra=() cluster="" tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --rounds) extra+=(--rounds "$2"); shift ;;
    --quick) extra+=(--quick) ;;
    --cluster) cluster=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "plan_accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
tessera=$(readlink -f "$tessera")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
launcher="mpirun --bind-to none"
if [[ -n $cluster ]]; then
  [[ $cluster =~ ^[0-9]+$ ]] || { echo "plan_accuracy.sh: --cluster takes a bandwidth in Mbit/s, e.g. 150" >&2; exit 2; }
  name="a$(printf '%05d' $(($$ % 100000)))"
  trap 'scripts/cluster.sh down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  scripts/cluster.sh up 2 --name "$name" --bandwidth "${cluster}mbit"
  launcher="$PWD/scripts/cluster.sh run --name $name -- --map-by node -x OMP_NUM_THREADS -x OMP_PROC_BIND"
fi
/usr/bin/python3 perf/plan_accuracy.py "$tessera" "$work" --steps "$steps" --launcher "$launcher" "${extra[@]}"
