#!/usr/bin/env bash
# Data parallelism on this machine with cosmoflow-small (2 warm-up steps, then the median of
# the timed steps, as in docs/benchmarks.md):
#  * allreduce_hidden_fraction: 1 - (time waiting for the gradient all-reduce with bucketed
#    overlap) / (the same with one bucket, i.e. nothing overlapped), both on 2 ranks. Each
#    step's wait is the last rank's to finish backprop (the metrics' allreduce_exposed_s): the
#    others wait for it as well, which is load imbalance, not communication;
#  * efficiency_2x1_vs_1x2: samples/s of 2 ranks x 1 thread over 1 rank x 2 threads.
# Usage: perf/data_parallel.sh [--steps N] [--size S] [--batch B] [--build DIR] [--no-progress-thread]
# (--no-progress-thread: buckets advance only between layers, for comparison)
# Last line: allreduce_hidden_fraction=H efficiency_2x1_vs_1x2=E
set -euo pipefail
cd "$(dirname "$0")/.."
steps=10 size=32 batch=4 build=build/perf progress=true
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --build) build=$2; shift ;;
    --no-progress-thread) progress=false ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "data_parallel.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli
export OMP_PROC_BIND=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# config BUCKET_KB FILE: cosmoflow-small on one stored batch (like the peer benchmarks).
config() {
  /usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$2" \
    "training.allreduce_bucket_kb=$1" "training.allreduce_progress_thread=$progress"
}
# run RANKS THREADS CONFIG NAME: prints "samples_per_s exposed_allreduce_seconds_over_the_timed_steps"
run() {
  # One rank per core for the multi-rank runs (Open MPI's default binding for few ranks); the
  # single rank must not be bound, or its two threads share one core.
  local bind=()
  [[ $1 -eq 1 ]] && bind=(--bind-to none)
  OMP_NUM_THREADS=$2 mpirun "${bind[@]}" -np "$1" "$build/tessera" train "$3" --metrics "$work/$4.jsonl" --quiet \
    --kokkos-threads="$2" --kokkos-disable-warnings >/dev/null
  local rate exposed
  rate=$(/usr/bin/python3 perf/cosmoflow_run.py rate "$work/$4.jsonl" "$batch")
  exposed=$(/usr/bin/python3 - "$work/$4.jsonl" <<'PY'
import json, sys
train = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "train"]
print(f"{train[-1]['allreduce_exposed_s'] - train[1]['allreduce_exposed_s']:.6f}")
PY
)
  echo "$rate $exposed"
}
config 4096 "$work/buckets.json"
config $((1 << 20)) "$work/one_bucket.json"
read -r rate_2x1 wait_overlap < <(run 2 1 "$work/buckets.json" buckets)
read -r _ wait_exposed < <(run 2 1 "$work/one_bucket.json" one_bucket)
read -r rate_1x2 _ < <(run 1 2 "$work/buckets.json" single)
echo "cosmoflow-small S=$size global batch $batch: 2 ranks x 1 thread $rate_2x1 samples/s, 1 rank x 2 threads $rate_1x2 samples/s"
echo "all-reduce wait of the last rank over the timed steps: overlapped buckets ${wait_overlap} s, one bucket ${wait_exposed} s"
/usr/bin/python3 -c "
w_o, w_e, r21, r12 = $wait_overlap, $wait_exposed, $rate_2x1, $rate_1x2
print(f'allreduce_hidden_fraction={1 - w_o / w_e:.2f} efficiency_2x1_vs_1x2={r21 / r12:.2f}')"
