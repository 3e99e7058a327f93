#!/usr/bin/env bash
# Soak test: trains the built-in tiny example for many steps, on 1 rank and on 2 data-parallel
# ranks, sampling each rank's resident memory (RSS) against the step the run has reached. A
# leak shows as RSS that keeps growing with steps after the warm-up (first 10% of the steps,
# at least 500). Prints one line per rank count and, last, the worst growth:
#   rss_growth_mb_per_1k_steps=<MB per 1,000 steps> steps=<steps>
# Target: at most 1 MB per 1,000 steps.
#
# Usage: perf/soak.sh [STEPS] [RANK_COUNTS]    (defaults: 10000 "1 2"; run from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
source perf/common.sh
steps=${1:-10000}
rank_counts=${2:-"1 2"}
build=build/perf
build_perf "$build" tessera_cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

worst=
for ranks in $rank_counts; do
  metrics=$work/soak-$ranks.jsonl
  cmd=("$build/tessera" train examples/cosmoflow_tiny.json --epochs 100000 --max-steps "$steps"
       --metrics "$metrics" --quiet)
  if [[ $ranks -gt 1 ]]; then
    cmd=(mpirun -np "$ranks" -x OMP_NUM_THREADS=1 "${cmd[@]}")
  fi
  export OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
  "${cmd[@]}" >"$work/soak-$ranks.out" 2>&1 &
  launcher=$!
  line=$(python3 perf/rss_sampler.py --launcher "$launcher" --metrics "$metrics" --ranks "$ranks" --steps "$steps")
  if ! wait "$launcher"; then
    echo "soak: the $ranks-rank run failed:" >&2
    tail -n 20 "$work/soak-$ranks.out" >&2
    exit 1
  fi
  echo "ranks=$ranks $line"
  growth=${line#rss_growth_mb_per_1k_steps=}
  growth=${growth%% *}
  if [[ -z $worst ]] || python3 -c "import sys; sys.exit(0 if $growth > $worst else 1)"; then worst=$growth; fi
done
echo "rss_growth_mb_per_1k_steps=$worst steps=$steps"
