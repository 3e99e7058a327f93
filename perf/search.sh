#!/usr/bin/env bash
# NSGA-II against random search on the built-in example (examples/search/cosmoflow_tiny.json,
# synthetic CosmoFlow-like fields) with the objectives validation loss and parameter count: both
# searches train the same number of candidates (G+1 generations x P; by default 8 x 8 = 64),
# and each is scored by the hypervolume of the loss-cost front of every candidate it trained,
# against the fixed reference point (loss 0.6, 40000 parameters), normalised to that box (0:
# nothing below the reference, 1: zero loss at zero parameters). Repeated for several seeds.
# Each candidate trains S steps (256) on 512 samples and is validated on 128: the example's own
# 32 steps on 128 samples leave the loss of one network trained twice with different seeds
# further apart than the losses of different networks, and a search on such readings selects
# luck (docs/search.md).
# Usage: perf/search.sh [--seeds "1 2 3"] [--generations G] [--population P] [--steps S] [--build DIR]
#                       [--tessera PATH]
# (G counts the generations after the first, as budget.generations does; --tessera: use this
# tessera command instead of building one in DIR.)
# Last line: nsga2_hypervolume=H random_hypervolume=H candidates=N nsga2_wins=W/N (means over
#            the seeds; wins: the seeds where NSGA-II's hypervolume is the larger)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="1 2 3" generations=7 population=8 steps=256 build=build/perf tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds=$2; shift ;;
    --generations) generations=$2; shift ;;
    --population) population=$2; shift ;;
    --steps) steps=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "search.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
export OMP_PROC_BIND=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# space ALGORITHM SEED FILE: the example with two objectives and this budget.
space() {
  /usr/bin/python3 - "$1" "$2" "$3" "$generations" "$population" "$steps" <<'PY'
import json, sys
algorithm, seed, out, generations, population, steps = sys.argv[1:7]
s = json.load(open("examples/search/cosmoflow_tiny.json"))
s["objectives"] = ["validation_loss", "parameters"]
s.pop("introspection", None)
s["base"]["data"].update({"samples": 512, "validation_samples": 128})
s["budget"] = {"generations": int(generations), "population": int(population), "steps": int(steps),
               "seed": int(seed), "algorithm": algorithm}
json.dump(s, open(out, "w"))
PY
}
# hypervolume STATE: of every trained candidate's (loss, parameters), normalised.
hypervolume() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
ref_loss, ref_params = 0.6, 40000.0
state = json.load(open(sys.argv[1]))
pts = sorted((r["objectives"][1] / ref_params, r["objectives"][0] / ref_loss)
             for r in state["history"] if not r["failed"] and None not in r["objectives"])
hv, best = 0.0, 1.0
for i, (c, l) in enumerate(pts):
    if c >= 1.0: break
    best = min(best, l)
    nxt = min(pts[i + 1][0], 1.0) if i + 1 < len(pts) else 1.0
    hv += (nxt - c) * (1.0 - best) if best < 1.0 else 0.0
print(f"{hv:.4f} {len(state['history'])}")
PY
}

nsga_sum=0 random_sum=0 count=0 candidates=0 wins=0
for seed in $seeds; do
  line="seed $seed:"
  for algorithm in nsga2 random; do
    space "$algorithm" "$seed" "$work/space.json"
    rm -rf "$work/out"
    OMP_NUM_THREADS=2 "$tessera" search "$work/space.json" -o "$work/out" --quiet --kokkos-disable-warnings \
      2>/dev/null
    read -r hv n < <(hypervolume "$work/out/search_state.json")
    line="$line ${algorithm}_hypervolume=$hv"
    candidates=$n
    if [[ $algorithm == nsga2 ]]; then nsga_hv=$hv; nsga_sum=$(echo "$nsga_sum + $hv" | bc -l); else random_sum=$(echo "$random_sum + $hv" | bc -l); fi
  done
  (($(echo "$nsga_hv > $hv" | bc -l))) && wins=$((wins + 1))
  echo "$line candidates=$candidates"
  count=$((count + 1))
done
printf 'nsga2_hypervolume=%.4f random_hypervolume=%.4f candidates=%d nsga2_wins=%d/%d\n' \
  "$(echo "$nsga_sum / $count" | bc -l)" "$(echo "$random_sum / $count" | bc -l)" "$candidates" "$wins" "$count"
