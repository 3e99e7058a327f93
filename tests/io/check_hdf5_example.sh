#!/usr/bin/env bash
# Usage: check_hdf5_example.sh TESSERA SOURCE_DIR WORKDIR [quick|full] — the README's example:
# `tessera datagen cosmoflow` writes the files examples/hdf5/cosmoflow_tiny.json names (relative
# to the working folder), then `tessera train` reads them. quick: a small data set and 4 steps
# through the whole path; full: the example as the README runs it, whose validation error must
# fall and end below 0.3 of predicting the mean.
set -euo pipefail
tessera=$1 src=$2 work=$3 mode=${4:-quick}
rm -rf "$work"; mkdir -p "$work"; cd "$work"
config=$src/examples/hdf5/cosmoflow_tiny.json
if [[ $mode == quick ]]; then
  "$tessera" datagen cosmoflow --output runs/cosmoflow_tiny_data --size 16 --samples 128 --validation-samples 16 \
    --no-progress --kokkos-disable-warnings | tee datagen.out
  grep -q '"sample_list": "runs/cosmoflow_tiny_data/train.txt"' datagen.out
  test -z "$(find runs -name '*.tmp.*')"  # nothing half-written left behind
  "$tessera" train "$config" --max-steps 4 --no-progress --kokkos-disable-warnings | tee run.out
  grep -q '^done: 4 steps' run.out
  grep -q 'hdf5 training data: 128 samples from sample list runs/cosmoflow_tiny_data/train.txt' run.out
  exit 0
fi
"$tessera" datagen cosmoflow --output runs/cosmoflow_tiny_data --size 16 --samples 1024 --validation-samples 128 \
  --no-progress --kokkos-disable-warnings
"$tessera" train "$config" --no-progress --metrics run.jsonl --kokkos-disable-warnings | tee run.out
/usr/bin/python3 - run.jsonl <<'PY'
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
v = [e for e in v if e["event"] == "validation"]
first, last = v[0]["loss"], v[-1]["loss"]
print(f"validation loss {first:.4f} -> {last:.4f}, predicting the mean {v[-1]['baseline_loss']:.4f}")
assert last < first, "validation error did not fall"
assert last < 0.3 * v[-1]["baseline_loss"], "validation error not far below predicting the mean"
PY
