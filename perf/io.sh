#!/usr/bin/env bash
# HDF5 input on this machine, on a `tessera datagen cosmoflow` data set (S=64, int16 counts, one
# file per sample, CosmoFlow's layout); protocol of docs/benchmarks.md (a warm-up pass,
# then the median of the timed passes; same threads for both sides):
#  * tessera_mb_per_s: every sample read in batches and converted to float32 (an affine
#    normalisation) into Kokkos memory by Tessera's reader, synchronously, in MB/s of the stored
#    bytes. The same reading two batches ahead is printed too: where the cores are all busy
#    converting (2 here), a background read competes with them instead of overlapping;
#  * h5py_mb_per_s: the same files read whole with h5py, f[name][()] (a read_direct into reused
#    arrays is printed too);
#  * hidden_fraction: cosmoflow-small trained by the real trainer on the same files (log1p
#    normalisation, as CosmoFlow) with the sample store off, so every step reads its files:
#    1 - (time per step in loading data, reading ahead) / (the same, reading synchronously).
# The files are in the page cache unless --cold, which drops them from it before every pass.
# Usage: perf/io.sh [--threads N] [--size S] [--samples N] [--batch B] [--steps N] [--cold] [--build DIR]
# Last line: tessera_mb_per_s=X h5py_mb_per_s=Y ratio=Z hidden_fraction=H
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2 size=64 samples=64 batch=4 steps=12 cold=0 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --size) size=$2; shift ;;
    --samples) samples=$2; shift ;;
    --batch) batch=$2; shift ;;
    --steps) steps=$2; shift ;;
    --cold) cold=1 ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "io.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
build_perf "$build" tessera_cli tessera_bench_io

export OMP_NUM_THREADS=$threads OMP_PROC_BIND=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== datagen: $samples samples of 4 x ${size}^3 int16, one file per sample"
"$build/tessera" datagen cosmoflow --output "$work/data" --samples "$samples" --validation-samples 0 --size "$size" \
  --quiet --kokkos-threads="$threads" --kokkos-disable-warnings | head -n 1
/usr/bin/python3 - "$size" "$batch" examples/cosmoflow_small.json "$work/model.json" <<'PY'
import json, sys
size, batch, src, dst = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
c = json.load(open(src))
c["model"]["input"]["size"] = [size] * 3
json.dump(c, open(dst, "w"))
PY
# Reading: counts to floats with an affine normalisation. Training: CosmoFlow's log1p.
list="\"sample_list\": \"$work/data/train.txt\""
read_data="{\"source\": \"hdf5\", $list, \"normalize\": {\"mean\": 64, \"std\": 40}}"
train_data="{\"source\": \"hdf5\", $list, \"normalize\": {\"transform\": \"log1p\", \"mean\": 4.1, \"std\": 0.5}}"

echo "== tessera reader (threads=$threads, batch $batch) and cosmoflow-small training on the files"
bench=$("$build/perf/tessera_bench_io" --data "$read_data" --train-data "$train_data" --batch "$batch" --reps 5 \
  --model "$work/model.json" --steps "$steps" --cold "$cold" --kokkos-threads="$threads" --kokkos-disable-warnings |
  grep -E '^(read|train|hidden)')
echo "$bench"
tessera_rate=$(sed -n 's/^read synchronous: .* \([0-9.]*\) MB\/s (.*/\1/p' <<<"$bench")
hidden=$(sed -n 's/^hidden_fraction=\([0-9.-]*\) .*/\1/p' <<<"$bench")

echo "== h5py (plain f[name][()], and read_direct into reused arrays)"
h5py_out=$(/usr/bin/python3 - "$work/data/train.txt" 5 "$cold" <<'PY'
import os, statistics, sys, time
import h5py, numpy as np
listing, reps, cold = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
base = os.path.dirname(listing)
files = [os.path.join(base, l.strip()) for l in open(listing) if l.strip() and not l.startswith("#")]
def evict():
    for p in files:
        fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
def plain():
    n = 0
    for p in files:
        with h5py.File(p, "r") as f:
            for name in ("inputs", "targets"):
                n += f[name][()].nbytes
    return n
arrays = {}
def direct():
    n = 0
    for p in files:
        with h5py.File(p, "r") as f:
            for name in ("inputs", "targets"):
                d = f[name]
                a = arrays.setdefault(name, np.empty(d.shape, d.dtype))
                d.read_direct(a); n += a.nbytes
    return n
for fn in (plain, direct):
    fn()
    times = []
    for _ in range(reps):
        if cold: evict()
        t = time.perf_counter(); n = fn(); times.append(time.perf_counter() - t)
    m = statistics.median(times)
    print(f"h5py {fn.__name__}: {n / 1e6:.1f} MB per pass, median {m:.3f} s: {n / 1e6 / m:.1f} MB/s")
PY
)
echo "$h5py_out"
h5py_rate=$(sed -n 's/^h5py plain: .* \([0-9.]*\) MB\/s$/\1/p' <<<"$h5py_out")
/usr/bin/python3 -c "
t, h, hidden = $tessera_rate, $h5py_rate, $hidden
print(f'tessera_mb_per_s={t:.1f} h5py_mb_per_s={h:.1f} ratio={t / h:.2f} hidden_fraction={hidden:.2f}')"
