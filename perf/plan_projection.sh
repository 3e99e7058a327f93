#!/usr/bin/env bash
# Projection: what `tessera plan` predicts, with the published Sierra and Theta profiles
# (share/machines/), for the runs of Oyama et al. (CosmoFlow at 512^3, hybrid data+spatial
# parallelism on V100s, up to 2048 GPUs) and of Dryden et al. (ResNet-50 past one sample per
# GPU), to set beside their published results (docs/plan.md, "Projection"). Nothing is trained
# or measured: published profiles price layers by their roofline, so it runs in about a
# minute on 2 cores. Runs (ranks/global batch):
#  * CosmoFlow 512^3 (examples/cosmoflow/cosmoflow_512.json) on sierra: 8 ranks per sample
#    (16/2, 64/8, 256/32, 1024/128, 2048/256), 4 per sample (16/4), and the global batch 64
#    held while the ranks grow (512/64, 1024/64, 2048/64); on theta: 16/16, 64/64, 256/64,
#    1024/128.
#  * ResNet-50 (examples/resnet/resnet50.json, 224x224) on sierra and theta: global batch 32
#    on 32, 64, 128 ranks, and 128 on 128, 256 ranks (1, 2, 4 ranks per sample).
# The published batches could not be confirmed (docs/plan.md, "Projection"): these are ours.
# Columns: the planned step and the data-parallel one (or why it cannot run or fit), a
# hand-written hybrid layout (every layer {sample B, depth 2, height 2, width 2}, CosmoFlow at
# 8 ranks per sample, `tessera plan --given`), the planned layout in runs of equal
# distributions, and the planned step's speedup over data parallelism.
# Usage: perf/plan_projection.sh [--build DIR] [--out DIR]   (DIR: build/default; out: a temp dir)
# Last line: projection_rows=N
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/default out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "plan_projection.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [[ ! -x "$build/tessera" ]]; then
  echo "plan_projection.sh: no $build/tessera; build it: cmake --preset default && cmake --build build/default --target tessera_cli" >&2
  exit 2
fi
if [[ -z "$out" ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

cosmoflow=examples/cosmoflow/cosmoflow_512.json
resnet=examples/resnet/resnet50.json

# plan NAME CONFIG MACHINE RANKS BATCH [--given]: the plan's JSON, or its error, under $out.
# Exit 3 (no layout fits) still writes the JSON; an error (1) leaves its message instead.
plan() {
  local name=$1 config=$2 machine=$3 ranks=$4 batch=$5 rc=0
  shift 5
  "$build/tessera" plan "$config" --ranks "$ranks" --batch-size "$batch" --machine "share/machines/$machine.json" \
    --json "$out/$name.json" "$@" >"$out/$name.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 && $rc -ne 3 ]]; then
    rm -f "$out/$name.json"
    grep -m1 'error' "$out/$name.log" >"$out/$name.error" || echo "exit $rc" >"$out/$name.error"
  fi
}

# The hand-written hybrid: the config with one model-wide distribution.
/usr/bin/python3 - "$cosmoflow" "$out" <<'PY'
import json, sys
config, out = sys.argv[1], sys.argv[2]
c = json.load(open(config))
for batch in (2, 8, 32, 64, 128, 256):
    c["model"]["distribution"] = {"sample": batch, "depth": 2, "height": 2, "width": 2}
    json.dump(c, open(f"{out}/hybrid_{batch}.json", "w"))
PY

rows=()
add() {  # add MODEL MACHINE RANKS BATCH
  local model=$1 machine=$2 ranks=$3 batch=$4 config=$cosmoflow
  [[ $model == resnet50 ]] && config=$resnet
  local name="${model}_${machine}_${ranks}_${batch}"
  plan "$name" "$config" "$machine" "$ranks" "$batch"
  if [[ $model == cosmoflow512 && $((ranks / batch)) -eq 8 && $((ranks % batch)) -eq 0 ]]; then
    plan "${name}_hybrid" "$out/hybrid_$batch.json" "$machine" "$ranks" "$batch" --given
  fi
  rows+=("$name")
}
for rb in 16/2 16/4 64/8 256/32 512/64 1024/64 1024/128 2048/64 2048/256; do
  add cosmoflow512 sierra "${rb%/*}" "${rb#*/}"
done
for rb in 16/16 64/64 256/64 1024/128; do
  add cosmoflow512 theta "${rb%/*}" "${rb#*/}"
done
for machine in sierra theta; do
  for rb in 32/32 64/32 128/32 128/128 256/128; do
    add resnet50 "$machine" "${rb%/*}" "${rb#*/}"
  done
done

/usr/bin/python3 - "$out" "${rows[@]}" <<'PY'
import json, os, sys
out, rows = sys.argv[1], sys.argv[2:]

def load(name):
    p = f"{out}/{name}.json"
    return json.load(open(p)) if os.path.exists(p) else None

def error(name):
    p = f"{out}/{name}.error"
    if not os.path.exists(p):
        return "-"
    text = open(p).read().strip()
    text = text.split("error (rank 0): ", 1)[-1].split(" (data parallel:", 1)[0].split(" (the nearest:", 1)[0]
    text = text.split(".json: ", 1)[-1]  # the config's name: the row says which model it is
    return "cannot plan: " + text[:100]

def step(layout):
    if not layout.get("valid", True):
        return "cannot run"
    ms = f"{layout['step_time_s'] * 1000:.1f}"
    return ms if layout["fits"] else f"{ms} (needs {layout['memory_bytes'] / 2**30:.1f} GiB)"

def dist(d):
    parts = [f"{k} {v}" for k, v in d.items() if not isinstance(v, int) or v > 1]
    return "{" + ", ".join(parts) + "}" if parts else "{1 rank}"

def runs(layers):
    groups = []
    for l in layers:
        d = dist(l["distribution"])
        if groups and groups[-1][2] == d:
            groups[-1][1] = l["name"]
        else:
            groups.append([l["name"], l["name"], d])
    text = [f"{a}{'' if a == b else '-' + b} {d}" for a, b, d in groups]
    if len(text) > 5:
        text = text[:4] + [f"... {len(text) - 4} more runs"]
    return "; ".join(text)

print("| model | machine | ranks | batch | planned ms | data parallel ms | hybrid d2h2w2 ms | speedup planned/DP | planned layout |")
print("|---|---|---|---|---|---|---|---|---|")
for name in rows:
    model, machine, ranks, batch = name.split("_")
    p = load(name)
    h = load(name + "_hybrid")
    hybrid = step(h["chosen"]) if h else (error(name + "_hybrid") if os.path.exists(f"{out}/{name}_hybrid.error") else "-")
    if p is None:
        print(f"| {model} | {machine} | {ranks} | {batch} | {error(name)} | - | {hybrid} | - | - |")
        continue
    chosen = p["chosen"]
    dp = next((r for r in p["references"] if r["label"] == "data parallel"), None)
    if dp is None or not dp.get("valid", True):
        why = (dp or {}).get("why", "not planned")
        dp_text = "cannot run: " + why.split(": ", 1)[-1][:90]
        speedup = "-"
    else:
        dp_text = step(dp)
        speedup = f"{dp['step_time_s'] / chosen['step_time_s']:.2f}" if dp["fits"] and chosen["fits"] else "-"
    print(f"| {model} | {machine} | {ranks} | {batch} | {step(chosen)} | {dp_text} | {hybrid} | {speedup} | {runs(chosen['layers'])} |")
print(f"projection_rows={len(rows)}")
PY
