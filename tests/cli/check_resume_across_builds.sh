#!/usr/bin/env bash
# Usage: check_resume_across_builds.sh WRITER READER CONFIG WORKDIR
# A checkpoint written by one build (WRITER, e.g. the CUDA build on a GPU) resumes in another
# (READER, e.g. the CPU build): WRITER trains 4 steps and checkpoints, then both builds resume
# from that file to step 8, and their losses at steps 5 to 8 must agree to 1e-3 relative (same
# data, same parameters; only the kernels' summation order differs).
set -euo pipefail
writer=$1 reader=$2 config=$3 work=$4
python=${TESSERA_PYTHON:-python3}
mkdir -p "$work"; rm -f "$work"/across.*
"$python" - "$config" "$work/across.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["training"]["log_every"] = 1  # one loss per step
json.dump(cfg, open(sys.argv[2], "w"))
PY
run() {  # run TESSERA METRICS ARGS...
  local tessera=$1 metrics=$2; shift 2
  "$tessera" train "$work/across.json" --epochs 1 --metrics "$metrics" --no-progress --kokkos-disable-warnings "$@" \
    >"$metrics.out" 2>&1 || { cat "$metrics.out"; exit 1; }
}
run "$writer" "$work/across.first.jsonl" --max-steps 4 --checkpoint "$work/across.ckpt"
run "$writer" "$work/across.writer.jsonl" --max-steps 8 --resume "$work/across.ckpt"
run "$reader" "$work/across.reader.jsonl" --max-steps 8 --resume "$work/across.ckpt"
"$python" - "$work/across.writer.jsonl" "$work/across.reader.jsonl" <<'PY'
import json, sys
def losses(path):
    return {e["step"]: e["loss"] for e in map(json.loads, open(path)) if e["event"] == "train"}
w, r = losses(sys.argv[1]), losses(sys.argv[2])
steps = sorted(set(w) & set(r))
assert steps and steps[0] > 4 and steps[-1] == 8, f"resumed steps: writer {sorted(w)}, reader {sorted(r)}"
worst = max(abs(w[s] - r[s]) / max(abs(w[s]), 1e-12) for s in steps)
for s in steps:
    print(f"step {s}: loss {w[s]:.6f} (writer) {r[s]:.6f} (reader)")
print(f"worst relative difference {worst:.2e}")
sys.exit(0 if worst <= 1e-3 else 1)
PY
