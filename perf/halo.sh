#!/usr/bin/env bash
# Halo exchange against convolution time per layer of cosmoflow-small with each sample split
# in depth over 2 ranks (1 thread each), measured by `tessera train --profile` (2 warm-up
# steps left out) twice: with the overlap (each conv computes the rows that need no halo
# while the halos travel, and returns input-gradient halos while it computes the weight
# gradient) and without it ("halo_overlap": false in the model spec).
#   halo_fraction   = halo exchange time without overlap (packing, copying the block into its
#                     haloed buffer, waiting for messages, unpacking) / convolution time
#   hidden_fraction = 1 - time blocked on messages with overlap / the same without overlap
#                     (packing and copies are local work that no overlap can hide)
# Waits also absorb load imbalance between the ranks (one rank arriving late), so on a
# shared 2-core machine the per-layer figures are noisy; the totals are what to compare.
# Usage: perf/halo.sh [--size S] [--batch B] [--steps N] [--ranks R] [--build DIR]
# Last line: halo_fraction=H hidden_fraction=O
set -euo pipefail
cd "$(dirname "$0")/.."
size=64 batch=4 steps=6 ranks=2 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --steps) steps=$2; shift ;;
    --ranks) ranks=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "halo.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli
export OMPI_MCA_hwloc_base_binding_policy=none  # ranks (1 thread each) share the cores freely
export OMP_PROC_BIND=false OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run OVERLAP(true|false): profile of rank 0 in $work/OVERLAP.jsonl
run() {
  /usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$work/$1.json" \
    "model.distribution={\"depth\": $ranks}" "model.halo_overlap=$1"
  mpirun -np "$ranks" "$build/tessera" train "$work/$1.json" --profile --metrics "$work/$1.jsonl" --quiet \
    --kokkos-threads=1 --kokkos-disable-warnings >/dev/null
}
run false
run true
/usr/bin/python3 - "$work/false.jsonl" "$work/true.jsonl" "$ranks" "$size" <<'PY'
import json, re, sys
def regions(path):
    return [json.loads(l) for l in open(path) if '"profile"' in l][-1]["regions"]
plain, overlapped = regions(sys.argv[1]), regions(sys.argv[2])
def sec(r, name): return r.get(name, {}).get("seconds", 0.0)
layers = sorted({m.group(1) for n in plain for m in [re.match(r"halo/layer '([^']+)'", n)] if m})
print(f"cosmoflow-small S={sys.argv[4]}, depth split over {sys.argv[3]} ranks (rank 0's profile, seconds over the timed steps)")
print(f"{'layer':8} {'conv_s':>8} {'halo_s':>8} {'wait_s':>8} {'wait_ovl_s':>10} {'halo/conv':>9} {'hidden':>7}")
conv_total = halo_total = wait_total = exposed_total = 0.0
for l in layers:
    halo_name = next(n for n in plain if n.startswith(f"halo/layer '{l}'"))
    wait_name = "halo_wait/" + halo_name[len("halo/"):]
    halo = sec(plain, halo_name)
    conv = sec(plain, f"forward/{l}") + sec(plain, f"backward/{l}") - halo
    wait, exposed = sec(plain, wait_name), sec(overlapped, wait_name)
    conv_total, halo_total = conv_total + conv, halo_total + halo
    wait_total, exposed_total = wait_total + wait, exposed_total + exposed
    hidden = 1 - exposed / wait if wait > 0 else 0.0
    print(f"{l:8} {conv:8.4f} {halo:8.4f} {wait:8.4f} {exposed:10.4f} {halo / conv:9.3f} {hidden:7.2f}")
print(f"halo_fraction={halo_total / conv_total:.3f} hidden_fraction={1 - exposed_total / wait_total:.2f}")
PY
