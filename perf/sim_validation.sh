#!/usr/bin/env bash
# tessera-sim against measured steps on an emulated cluster of 2 nodes (scripts/cluster.sh, as
# root): the cluster is calibrated (`tessera calibrate`), a platform is written with its links
# at the rate they are shaped to and the latencies the calibration measured, and for cosmoflow-small and unet3d-small at 32^3
# under the data, spatial and hybrid layouts of perf/plan_accuracy.py the step that training
# measures on the cluster is set beside the step tessera-sim simulates from the layout's
# schedule (planned with layer times of one rank, so its halos, sums and gradient buckets are
# messages the simulator moves) and beside the planner's own prediction (docs/simulation.md,
# "Validation"). R rounds, interleaved; medians kept.
# Usage: perf/sim_validation.sh [--mbit M] [--rounds R] [--steps N] [--keep DIR] [--build DIR | --tessera PATH]
#   (M: the links' rate in Mbit/s, default 150, as perf/plan_accuracy.sh's docs use)
# Last line: sim_vs_cluster_error=MAX sim_vs_cluster_error_median=MED planner_vs_cluster_error=MAX
#   trace_replay_vs_cluster_error=MAX (each run's own --trace replayed on the same platform)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" keep="" args=() mbit=150
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds|--steps) args+=("$1" "$2"); shift ;;
    --mbit) mbit=$2; shift ;;
    --keep) keep=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sim_validation.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[[ $mbit =~ ^[0-9]+$ ]] || { echo "sim_validation.sh: --mbit takes a bandwidth in Mbit/s, e.g. 150" >&2; exit 2; }
if ! pkg-config --exists simgrid; then
  echo "sim_validation.sh: needs SimGrid for tessera-sim: scripts/install_deps.sh --for-simulation" >&2
  exit 2
fi
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli tessera_sim
  tessera=$build/tessera
fi
cluster_runs sim_validation.sh
name="v$(printf '%05d' $(($$ % 100000)))"
trap 'scripts/cluster.sh down --name "$name" >/dev/null 2>&1 || true; [[ -n $keep ]] || rm -rf "$work"' EXIT
scripts/cluster.sh up 2 --name "$name" --bandwidth "${mbit}mbit"
launcher="$PWD/scripts/cluster.sh run --name $name -- --map-by node -x OMP_NUM_THREADS -x OMP_PROC_BIND"
/usr/bin/python3 perf/sim_validation.py "$tessera" "$work" --launcher "$launcher" --mbit "$mbit" "${args[@]}"
