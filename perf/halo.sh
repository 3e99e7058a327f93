#!/usr/bin/env bash
# Halo exchange against convolution time per split axis, and what overlapping them gains:
# cosmoflow-small (S=64, batch 4) split over depth, height and width on 2 ranks, and a
# small-block model (perf/halo_small_block.json: 64 channels, blocks of 16x32x32 and 16x16x32
# voxels, as small as at scale) on 2 and 4 ranks, one thread per rank. Each case runs R times
# exchanging first, overlapping where each layer measured that it pays (the default), and
# overlapping every layer that can; perf/halo.py says how each figure is made.
#   halo_fraction   halo work exchanging first / convolution time
#   hidden_fraction 1 - exposed / in-flight halo time when overlapping, imbalance left out
#   overlap_speedup step time exchanging first / by default
#   forced_speedup  step time exchanging first / overlapping every layer that can
# Usage: perf/halo.sh [--runs R] [--steps N] [--cases A,B] [--build DIR | --tessera PATH]
#   --tessera: time this tessera command instead of building perf's (to compare two builds)
# Last lines: case=… halo_fraction=… hidden_fraction=… overlap_speedup=… forced_speedup=…
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5 steps=4 cases= build=build/perf tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --steps) steps=$2; shift ;;
    --cases) cases=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "halo.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
export OMPI_MCA_hwloc_base_binding_policy=none  # ranks (1 thread each) share the cores freely
export OMP_PROC_BIND=false OMP_NUM_THREADS=1
/usr/bin/python3 perf/halo.py "$tessera" --runs "$runs" --steps "$steps" ${cases:+--cases "$cases"}
