#!/usr/bin/env bash
# Usage: check_precision_resume.sh TESSERA CONFIG WORKDIR — a checkpoint holds fp32 master
# weights whatever the run computed in, so a bf16 run's checkpoint resumes in fp32 and an
# fp32 run's in bf16; the metrics log records each run's precision. Where the CPU has no bf16
# instructions, checks instead that --precision bf16 is refused saying so.
set -euo pipefail
tessera=$1 config=$2 work=$3
mkdir -p "$work"; rm -f "$work"/p.*
if ! "$tessera" info | grep -q '^onednn isa:.*bf16 instructions: yes'; then
  if "$tessera" train "$config" --max-steps 1 --precision bf16 --quiet >"$work/p.out" 2>&1; then
    echo "bf16 ran on a build or CPU without bf16 instructions"; exit 1
  fi
  grep -Eq 'no bf16 instructions|no bf16 convolution' "$work/p.out"
  echo "bf16 refused here, as it should be:"; cat "$work/p.out"; exit 0
fi
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
run fp32 5 --resume "$work/p.bf16.ckpt"
run bf16 7 --resume "$work/p.fp32.ckpt"
test -z "$(ls "$work" | grep '\.tmp\.' || true)"
echo "bf16 -> fp32 -> bf16 resumes ok"
