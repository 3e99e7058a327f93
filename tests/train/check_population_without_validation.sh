#!/usr/bin/env bash
# Usage: check_population_without_validation.sh MPIEXEC TESSERA CONFIG WORKDIR
# A 2-trainer population whose data has no validation set: the table says there is no
# validation figure and names no best trainer, and the metrics log's population record has
# null losses and a null best trainer (not −1 and trainer 0).
set -euo pipefail
mpiexec=$1 tessera=$2 config=$3 work=$4
python=${TESSERA_PYTHON:-python3}
mkdir -p "$work"; rm -f "$work"/noval.*
"$python" - "$config" "$work/noval.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["data"].update({"samples": 512, "validation_samples": 0})
json.dump(cfg, open(sys.argv[2], "w"))
PY
"$mpiexec" -n 2 "$tessera" train "$work/noval.json" --trainers 2 --epochs 1 --no-progress --kokkos-threads=1 \
  --metrics "$work/noval.jsonl" >"$work/noval.out" 2>&1 || { cat "$work/noval.out"; exit 1; }
cat "$work/noval.out"
grep -q "no validation set (data.validation_samples is 0): no trainer is named best" "$work/noval.out"
! grep -q "<- best" "$work/noval.out"
"$python" - "$work/noval.jsonl" <<'PY'
import json, sys
pop = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "population"]
assert pop, "no population record"
assert pop[-1]["best_trainer"] is None and pop[-1]["validation_loss"] == [None, None], pop[-1]
print("population record:", pop[-1])
PY
