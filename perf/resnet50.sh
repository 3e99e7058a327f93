#!/usr/bin/env bash
# ResNet-50 (examples/resnet/resnet50.json) training throughput on this CPU: Tessera against the
# PyTorch peer (perf/torch_resnet50.py), both in this run, same thread count and batch; the
# protocol of docs/benchmarks.md (2 warm-up steps, median of the timed steps). Inputs are
# synthetic: one stored batch of normal random images with random labels, for both.
# Usage: perf/resnet50.sh [--threads N] [--steps N] [--size S] [--batch B] [--build DIR]
# Last line: tessera_samples_per_s=X torch_samples_per_s=Y ratio=Z peak_rss_mb=M
# The peer runs with TESSERA_PEER_PYTHON (default /usr/bin/python3, Debian's python3-torch).
# --build DIR holding a tessera binary uses it as it is; otherwise DIR gets the perf build.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2 steps=5 size=224 batch=8 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "resnet50.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
peer_python=${TESSERA_PEER_PYTHON:-/usr/bin/python3}
"$peer_python" -c 'import torch' 2>/dev/null ||
  { echo "resnet50.sh: $peer_python cannot import torch (set TESSERA_PEER_PYTHON)" >&2; exit 1; }
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null ||
  { echo "resnet50.sh: /usr/bin/python3 needs h5py and numpy (python3-h5py, python3-numpy) for the input file" >&2; exit 1; }

source perf/common.sh
if [[ ! -x $build/tessera ]]; then build_perf "$build" tessera_cli; fi

export OMP_NUM_THREADS=$threads OMP_PROC_BIND=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One batch of synthetic images, stored once: the in-memory store serves it after the first
# step, so the timed steps measure training. One step per epoch, every step logged.
/usr/bin/python3 - "$work" "$size" "$batch" "$((steps + 2))" <<'PY'
import json, sys
import h5py, numpy as np
work, size, batch, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
with h5py.File(f"{work}/batch.h5", "w") as f:
    f["inputs"] = rng.standard_normal((batch, 1, size, size, 3), dtype=np.float32)
    f["targets"] = rng.integers(0, 1000, (batch, 1)).astype(np.int32)
c = json.load(open("examples/resnet/resnet50.json"))
c["model"]["input"]["size"] = [size, size]
c["data"] = {"source": "hdf5", "files": f"{work}/batch.h5"}
c["optimizer"].pop("schedule")  # a constant rate, as the peer's: a few steps cannot hold the warmup
c["training"].update({"batch_size": batch, "epochs": epochs, "log_every": 1})
json.dump(c, open(f"{work}/run.json", "w"))
PY

echo "== tessera: resnet-50 ${size}x${size}x3 batch=$batch threads=$threads (synthetic inputs)"
"$build/tessera" train "$work/run.json" --metrics "$work/metrics.jsonl" --quiet --kokkos-threads="$threads" \
  --kokkos-disable-warnings | tail -n 1
tessera_rate=$(/usr/bin/python3 perf/cosmoflow_run.py rate "$work/metrics.jsonl" "$batch")
peak_rss=$(/usr/bin/python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["peak_rss_mb"])' \
  "$work/metrics.jsonl")
echo "tessera median step: $tessera_rate samples/s"

echo "== torch peer (best of default and channels_last memory format)"
best=0
for fmt in default channels_last; do
  out=$("$peer_python" perf/torch_resnet50.py "$size" "$batch" "$steps" "$threads" "$fmt")
  echo "$out"
  rate=$(sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' <<<"$out")
  best=$(/usr/bin/python3 -c "print(max($best, $rate))")
done

/usr/bin/python3 - "$tessera_rate" "$best" "$peak_rss" <<'PY'
import sys
t, p, rss = map(float, sys.argv[1:])
print(f"tessera_samples_per_s={t:.2f} torch_samples_per_s={p:.2f} ratio={t / p:.2f} peak_rss_mb={rss:.0f}")
PY
