#!/usr/bin/env bash
# Usage: check_short_run.sh TESSERA CONFIG WORKDIR — trains a few steps with a metrics log and
# a checkpoint, then checks both files and resumes from the checkpoint.
set -euo pipefail
tessera=$1 config=$2 work=$3
mkdir -p "$work"; rm -f "$work"/run.*
"$tessera" train "$config" --max-steps 4 --epochs 1 --metrics "$work/run.jsonl" --checkpoint "$work/run.ckpt" \
  --no-progress --kokkos-threads=2 | tee "$work/run.out"
grep -q '^done: 4 steps' "$work/run.out"
/usr/bin/python3 - "$work/run.jsonl" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
kinds = [e["event"] for e in events]
assert kinds[0] == "start" and kinds[-1] == "end", kinds
train = [e for e in events if e["event"] == "train"]
assert train and all(e["loss"] > 0 and e["samples_per_s"] > 0 for e in train), train
assert events[-1]["steps"] == 4 and events[-1]["peak_rss_mb"] > 0
print("metrics log ok:", len(events), "records")
PY
"$tessera" train "$config" --max-steps 6 --epochs 1 --resume "$work/run.ckpt" --quiet | tee "$work/resume.out"
grep -q '^done: 6 steps' "$work/resume.out"
test -z "$(ls "$work" | grep '\.tmp\.' || true)"
