#!/usr/bin/env bash
# Peak resident memory per rank of cosmoflow-small trained with each sample split in space
# (docs/benchmarks.md model, S=128, global batch 4, 2 steps, one OpenMP thread per
# rank so 8 ranks fit on a small machine):
#   1 rank: no split; 2: {depth 2}; 4: {depth 4}; 8: {depth 2, height 2, width 2}.
# The convolutions run on each rank's block of every sample; flatten gathers the blocks and the
# dense layers run replicated over each spatial group (see docs/parallelism.md).
# Usage: perf/spatial_memory.sh [--size S] [--batch B] [--steps N] [--build DIR]
# Last line: peak_mb_per_rank p1=A p2=B p4=C p8=D
set -euo pipefail
cd "$(dirname "$0")/.."
size=128 batch=4 steps=2 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --steps) steps=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "spatial_memory.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli
export OMPI_MCA_hwloc_base_binding_policy=none  # ranks (1 thread each) share the cores freely
export OMP_PROC_BIND=false OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run RANKS DISTRIBUTION_JSON: prints the peak resident MiB of the largest rank
run() {
  # Every rank count runs the same layers: fused convolutions and max pools (which never store
  # the convolutions' outputs) are not used under a spatial split, so they would mix two effects.
  /usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$steps" "$work/run$1.json" \
    "model.distribution=$2" "model.fuse_conv_max_pool=false" "data.store_mb=0"
  mpirun -np "$1" "$build/tessera" train "$work/run$1.json" --metrics "$work/run$1.jsonl" --quiet \
    --kokkos-threads=1 --kokkos-disable-warnings >/dev/null
  /usr/bin/python3 -c "
import json, sys
end = [json.loads(l) for l in open('$work/run$1.jsonl') if '\"end\"' in l][-1]
print(f\"{end['peak_rss_mb_max_rank']:.0f}\")"
}
p1=$(run 1 '{"sample": 1}')
echo "1 rank: peak ${p1} MiB"
p2=$(run 2 '{"depth": 2}')
echo "2 ranks {depth 2}: peak ${p2} MiB per rank ($(/usr/bin/python3 -c "print(f'{$p2/$p1:.2f}')") of 1 rank)"
p4=$(run 4 '{"depth": 4}')
echo "4 ranks {depth 4}: peak ${p4} MiB per rank ($(/usr/bin/python3 -c "print(f'{$p4/$p1:.2f}')") of 1 rank)"
p8=$(run 8 '{"depth": 2, "height": 2, "width": 2}')
echo "8 ranks {depth 2, height 2, width 2}: peak ${p8} MiB per rank ($(/usr/bin/python3 -c "print(f'{$p8/$p1:.2f}')") of 1 rank)"
echo "peak_mb_per_rank p1=$p1 p2=$p2 p4=$p4 p8=$p8"
