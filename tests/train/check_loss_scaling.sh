#!/usr/bin/env bash
# Usage: check_loss_scaling.sh TESSERA CONFIG WORKDIR MPIEXEC MPIFLAGS — trains CONFIG (dynamic
# loss scaling from 3e38, growth every 8 steps) on 2 ranks with replica checks on: the first
# steps overflow and are skipped on both ranks (the weights stay equal: check_replicas), the
# scale halves each time until steps go through, the metrics log records the scale and the
# skips, and a checkpoint taken mid-run carries the scale into the resumed run.
set -euo pipefail
tessera=$1 config=$2 work=$3 mpiexec=$4 flags=${5//;/ }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
# shellcheck disable=SC2086
"$mpiexec" -n 2 $flags "$tessera" train "$config" --no-progress --max-steps 12 --metrics first.jsonl \
  --checkpoint scaled.ckpt 2>&1 | tee first.log
grep -q "loss scaling: dynamic loss scaling from 3e+38 (x2 after 8 good steps, x0.5 on overflow)" first.log
grep -q "step 1 skipped: its gradients overflowed at loss scale 3e+38; the scale is now 1.5e+38" first.log
grep -q "done: 12 steps" first.log
python3 - <<'PY'
import json
train = [e for e in map(json.loads, open("first.jsonl")) if e["event"] == "train"]
last = train[-1]
assert last["skipped_steps"] >= 1, last
assert last["loss_scale"] < 3e38, last
assert train[0]["loss"] == train[0]["loss"], train[0]  # finite: skipped steps keep the weights sane
PY
scale=$(python3 -c "import json; print([e for e in map(json.loads, open('first.jsonl')) if e['event'] == 'train'][-1]['loss_scale'])")
# shellcheck disable=SC2086
"$mpiexec" -n 2 $flags "$tessera" train "$config" --no-progress --max-steps 16 --resume scaled.ckpt \
  --metrics resumed.jsonl 2>&1 | tee resumed.log
grep -q "resumed from scaled.ckpt at step 12" resumed.log
python3 - "$scale" <<'PY'
import json, sys
header_scale = float(sys.argv[1])
# The resumed run starts from the checkpointed scale, not the config's 3e38: no step of it
# overflows at 3e38 again.
log = open("resumed.log").read()
assert "at loss scale 3e+38" not in log, log
train = [e for e in map(json.loads, open("resumed.jsonl")) if e["event"] == "train"]
assert train and train[-1]["loss_scale"] <= header_scale * 2, (train[-1], header_scale)
PY
echo "loss scaling: skipped, backed off, resumed with the scale"
