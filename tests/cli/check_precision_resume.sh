#!/usr/bin/env bash
# Usage: check_precision_resume.sh TESSERA CONFIG WORKDIR — a checkpoint holds fp32 master
# weights whatever the run computed in, so a bf16 run's checkpoint resumes in fp32 and an
# fp32 run's in bf16; the metrics log records each run's precision. On a CPU without bf16
# instructions the bf16 layers run on the Kokkos backend (bf16 in software), and the run says so.
set -euo pipefail
tessera=$1 config=$2 work=$3
mkdir -p "$work"; rm -f "$work"/p.*
native=no
"$tessera" info | grep -q '^onednn isa:.*bf16 instructions: yes' && native=yes
run() {  # run PRECISION STEPS [--resume FILE]: trains and checks the log's precision
  local precision=$1 steps=$2; shift 2
  "$tessera" train "$config" --max-steps "$steps" --epochs 1 --precision "$precision" --metrics "$work/p.$precision.jsonl" \
    --checkpoint "$work/p.$precision.ckpt" --no-progress --kokkos-threads=2 "$@" | tee "$work/p.out"
  grep -q "^done: $steps steps" "$work/p.out"
  grep -q "^precision: $precision" "$work/p.out"
  /usr/bin/python3 - "$work/p.$precision.jsonl" "$precision" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
assert events[0]["precision"] == sys.argv[2] and events[-1]["precision"] == sys.argv[2], events[-1]
assert events[-1]["activation_mb"] > 0
PY
}
run bf16 3
if [[ $native == no ]]; then
  grep -Eq 'runs? convolution on kokkos: onednn: this CPU has no bf16 instructions' "$work/p.out"
fi
run fp32 5 --resume "$work/p.bf16.ckpt"
run bf16 7 --resume "$work/p.fp32.ckpt"
test -z "$(ls "$work" | grep '\.tmp\.' || true)"
echo "bf16 -> fp32 -> bf16 resumes ok"
