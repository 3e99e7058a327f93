#!/usr/bin/env bash
# cosmoflow-small training throughput on this CPU: Tessera against the PyTorch peer
# (perf/torch_cosmoflow.py), both in this run, same thread count; protocol of
# docs/benchmarks.md (2 warm-up steps, median of the timed steps).
# Usage: perf/cosmoflow_cpu.sh [--threads N] [--steps N] [--size S] [--batch B] [--build DIR | --tessera PATH]
#   --tessera: time this tessera command instead of building perf's (to compare two builds)
# Last line: tessera_samples_per_s=X torch_samples_per_s=Y ratio=Z conv_bound_fraction=F peak_rss_mb=M
# The peer runs with TESSERA_PEER_PYTHON (default /usr/bin/python3, Debian's python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2 steps=10 size=64 batch=4 build=build/perf tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cosmoflow_cpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
peer_and_tessera cosmoflow_cpu.sh
/usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$work/run.json"

echo "== tessera: cosmoflow-small S=$size batch=$batch threads=$threads"
"$tessera" train "$work/run.json" --metrics "$work/metrics.jsonl" --quiet --kokkos-threads="$threads" \
  --kokkos-disable-warnings | tail -n 1
tessera_rate=$(/usr/bin/python3 perf/cosmoflow_run.py rate "$work/metrics.jsonl" "$batch")
peak_rss=$(/usr/bin/python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["peak_rss_mb"])' \
  "$work/metrics.jsonl")

echo "== conv-bound limit: oneDNN's own conv rate on the model's shapes"
"$tessera" bench ops "$work/run.json" --backend onednn --reps 3 -o "$work/ops.json" --no-progress \
  --kokkos-threads="$threads" --kokkos-disable-warnings >/dev/null
bench=$(/usr/bin/python3 perf/cosmoflow_run.py conv_limit "$work/ops.json" onednn)
echo "$bench"
limit=$(sed -n 's/.*conv-bound limit \([0-9.]*\) samples\/s.*/\1/p' <<<"$bench")

echo "== torch peer (best of default and channels_last memory format)"
best=0
for fmt in default channels_last; do
  out=$("$peer_python" perf/torch_cosmoflow.py "$size" "$batch" "$steps" "$threads" "$fmt")
  echo "$out"
  rate=$(sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' <<<"$out")
  best=$(/usr/bin/python3 -c "print(max($best, $rate))")
done

/usr/bin/python3 - "$tessera_rate" "$best" "$limit" "$peak_rss" <<'PY'
import sys
t, p, lim, rss = map(float, sys.argv[1:])
print(f"tessera_samples_per_s={t:.2f} torch_samples_per_s={p:.2f} ratio={t / p:.2f} "
      f"conv_bound_fraction={t / lim:.2f} peak_rss_mb={rss:.0f}")
PY
