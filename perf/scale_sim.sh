#!/usr/bin/env bash
# Tessera's own training steps at thousands of ranks, by simulation: for each series `tessera
# plan` chooses the layout on a published machine profile (share/machines/), writes the step
# schedule, and tessera-sim replays it on that machine's modelled network (share/platforms/),
# so every point has the planner's step time beside the simulated one (docs/simulation.md).
# Nothing is trained or measured here: published profiles price layers by their roofline.
# Series:
#  * cosmoflow512-weak (Sierra-like): CosmoFlow at 512^3, 8 ranks per sample, 16 to 8192 ranks;
#  * cosmoflow128-strong (Sierra-like): CosmoFlow at 128^3, a global batch of 256 on 256 to 2048
#    ranks (1 to 8 ranks per sample). At 512^3 there is no strong-scaling series: fewer than 8
#    ranks per sample do not fit a V100's 16 GiB, and more cannot split the flatten's 2^3 block;
#  * cosmoflow128-data (Sierra-like): CosmoFlow at 128^3, one sample per rank, 4 to 8192 ranks;
#  * unet256-weak and unet256-strong (Sierra-like): unet3d-small on 256^3 volumes
#    (perf/unet3d_small_256.json), 8 ranks per sample from 16 to 2048 ranks, and a global batch
#    of 64 on 256 to 2048 ranks (fewer do not fit a V100);
#  * ffn-data (Theta-like): the flood-filling network, one sample per node, 1 to 4096 nodes
#    (Theta has 4,392);
#  * ltfb-cosmoflow128 (Sierra-like): populations of 1, 4, 16 and 64 trainers (LTFB) of 16
#    GPUs each, CosmoFlow at 128^3, one sample per GPU, a round of 10 steps and a pairwise
#    tournament (`tessera plan --trainers`); the speedup is K trainers' samples/s over one's.
# Efficiency: weak, the first point's step over each point's; strong, the first point's
# rank-seconds over each point's.
# About 3 minutes on 2 cores (an 8192-rank replay takes 20-50 s and 0.5 GB).
# Usage: perf/scale_sim.sh [--build DIR] [--out DIR] [--quick]   (DIR: build/perf; --out keeps
#   the plans, schedules' results and scale_sim.svg; --quick: up to 256 ranks)
# Last line: planner_vs_sim_error_median=E planner_vs_sim_error_max=M ffn_2048_efficiency=F
#   cosmoflow_hybrid_2048_efficiency=C ltfb_64_speedup=L replay_64_seconds=S replay_2048_seconds=T
#   replay_8192_seconds=U (the population series is outside the planner's errors: it plans one
#   trainer)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf out="" quick=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    --quick) quick=(--quick) ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale_sim.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if ! pkg-config --exists simgrid; then
  echo "scale_sim.sh: needs SimGrid for tessera-sim: scripts/install_deps.sh --for-simulation (Debian: libsimgrid-dev)" >&2
  exit 2
fi
source perf/common.sh
build_perf "$build" tessera_cli tessera_sim
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
/usr/bin/python3 perf/scale_sim.py "$build/tessera" "$out" "${quick[@]}"
