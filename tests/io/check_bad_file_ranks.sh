#!/usr/bin/env bash
# Usage: check_bad_file_ranks.sh TESSERA WORKDIR MPIEXEC MPIFLAGS — bad data under mpirun: a
# sample list naming a missing file (found by every rank when the data set opens) and a
# truncated file (found by the rank that reads it, mid-training) must each end all ranks with
# an error naming the file and the problem, and a non-zero status: no crash, no hang.
set -euo pipefail
tessera=$1 work=$2 mpiexec=$3 flags=${4//;/ }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$tessera" datagen cosmoflow --output data --size 8 --samples 16 --validation-samples 0 --quiet \
  --kokkos-disable-warnings >/dev/null
/usr/bin/python3 - <<'PY'
import json
model = {"input": {"channels": 4, "size": [8, 8, 8]},
         "layers": [{"type": "conv3d", "filters": 4, "padding": 1}, {"type": "relu"}, {"type": "flatten"},
                    {"type": "dense", "units": 4}]}
for name, listing in (("missing", "data/missing.txt"), ("truncated", "data/train.txt")):
    json.dump({"model": model, "loss": {"type": "mse"}, "optimizer": {"type": "sgd", "lr": 0.01},
               "data": {"source": "hdf5", "sample_list": listing},
               "training": {"epochs": 2, "batch_size": 4}}, open(f"{name}.json", "w"))
PY
{ cat data/train.txt; echo "train/sample_000099.h5"; } > data/missing.txt
size=$(stat -c %s data/train/sample_000011.h5)
truncate -s $((size / 2)) data/train/sample_000011.h5
expect() {  # PATTERN CONFIG
  local out status=0
  # shellcheck disable=SC2086
  out=$("$mpiexec" -n 2 $flags "$tessera" train "$2" --no-progress --kokkos-disable-warnings 2>&1) || status=$?
  if [[ $status -eq 0 ]]; then echo "expected a non-zero exit for $2; output:"; echo "$out"; exit 1; fi
  if grep -Eq -- "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error: " <<<"$out"; then
    echo "a sanitizer reported a finding for $2:"; echo "$out"; exit 1
  fi
  if ! grep -Eq -- "$1" <<<"$out"; then echo "output for $2 does not match '$1':"; echo "$out"; exit 1; fi
  echo "$2: exit $status with: $(grep -E -- "$1" <<<"$out" | head -n1)"
}
expect "error \(rank [01]\): data/missing.txt:17: sample file data/train/sample_000099.h5 does not exist" missing.json
expect "error \(rank [01]\): data/train/sample_000011.h5: HDF5 cannot open the file .*truncated file" truncated.json
