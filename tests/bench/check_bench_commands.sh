#!/usr/bin/env bash
# Usage: check_bench_commands.sh TESSERA CONFIG UNET_CONFIG WORKDIR — the `tessera bench` chain
# on a tiny model: peak, ops on every compiled backend, model, and a report over them, each
# result checked for what it must hold; then ops and model of a tiny U-Net, whose transposed
# convolutions and concatenations must be timed and counted in the step's split; and ops timed
# in another precision (--precision).
set -euo pipefail
tessera=$1 config=$2 unet=$3 work=$4
mkdir -p "$work"; rm -f "$work"/*.json "$work"/*.svg
"$tessera" bench peak --seconds 0.01 --triad-mb 16 -o "$work/peak.json" --no-progress --kokkos-threads=2 |
  tee "$work/peak.out"
# A host-only build says that it measured no device, and writes no device figures.
if ! "$tessera" info | grep -q 'default execution space Cuda'; then
  grep -q '^device: none, this build runs its ops on the host' "$work/peak.out"
  /usr/bin/python3 -c 'import json, sys; assert "device" not in json.load(open(sys.argv[1]))["peak"]' "$work/peak.json"
fi
"$tessera" bench ops "$config" --reps 1 --warmup 0 --peak "$work/peak.json" -o "$work/ops.json" --no-progress \
  --kokkos-threads=2 | tee "$work/ops.out"
"$tessera" bench model "$config" --ops "$work/ops.json" --peak "$work/peak.json" --backend kokkos --backend auto \
  --steps 1 --warmup 1 -o "$work/model.json" --no-progress --kokkos-threads=2 | tee "$work/model.out"
"$tessera" bench report "$work/ops.json" "$work/model.json" "$work/peak.json" --cascade "$work/cascade.svg" \
  --roofline "$work/roofline.svg" | tee "$work/report.out"
backends=$("$tessera" info | sed -n 's/^op backends: *auto, //p')
/usr/bin/python3 - "$work" "$backends" <<'PY'
import json, sys
work, backends = sys.argv[1], [b.strip() for b in sys.argv[2].split(",")]
peak = json.load(open(work + "/peak.json"))["peak"]
assert peak["fma_gflops_one_core"] > 0 and peak["triad_gbs_all_cores"] > 0, peak
ops = json.load(open(work + "/ops.json"))
assert ops["kind"] == "ops" and ops["machine"]["cpu_model"] and ops["machine"]["threads"] == 2, ops["machine"]
for b in backends:
    convs = [o for o in ops["ops"] if o["backend"] == b and o["op_class"].startswith("conv_")]
    assert convs and all(o["supported"] and o["seconds"] > 0 and 0 < o["arch_efficiency"] for o in convs), (b, convs)
assert max(o["app_efficiency"] for o in ops["ops"]) == 1.0
model = json.load(open(work + "/model.json"))
steps = {m["platform"]: m for m in model["models"]}
assert set(steps) == {"kokkos@2t", "auto@2t"}, steps.keys()
assert all(m["supported"] and m["step_seconds"] > 0 and m["compute_bound_seconds"] > 0 for m in steps.values()), steps
print("bench results ok:", len(ops["ops"]), "op timings,", len(steps), "step timings")
PY
grep -Eq '^pp_app=cosmoflow-tiny:[0-9.]+ pp_arch=cosmoflow-tiny:[0-9.]+ best_conv_arch_eff=[0-9.]+$' <(tail -n1 "$work/report.out")
grep -q '</svg>' "$work/cascade.svg"
grep -q '<circle' "$work/roofline.svg"
"$tessera" bench ops "$unet" --size 8 --batch-size 1 --reps 1 --warmup 0 --backend kokkos --peak "$work/peak.json" \
  -o "$work/unet_ops.json" --no-progress --kokkos-threads=2 >/dev/null
"$tessera" bench model "$unet" --size 8 --batch-size 1 --ops "$work/unet_ops.json" --peak "$work/peak.json" \
  --backend kokkos --steps 1 --warmup 0 -o "$work/unet_model.json" --no-progress --kokkos-threads=2 >/dev/null
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
ops = json.load(open(work + "/unet_ops.json"))["ops"]
classes = {o["op_class"] for o in ops}
for c in ("conv_transpose_forward", "conv_transpose_backward_data", "conv_transpose_backward_weights",
          "concat_forward", "concat_backward"):
    timed = [o for o in ops if o["op_class"] == c]
    assert len(timed) == 2 and all(o["supported"] and o["seconds"] > 0 and o["bytes"] > 0 for o in timed), (c, timed)
# The split counts every timed op of the step: all but the first convolution's backward-data.
counted = sum(o["seconds"] for o in ops
              if not (o["layer"] == "enc1_conv1" and o["op_class"] == "conv_backward_data"))
m = json.load(open(work + "/unet_model.json"))["models"][0]
split = m["compute_bound_seconds"] + m["memory_bound_seconds"]
assert abs(split - counted) <= 1e-9 * max(1.0, counted), (split, counted)
print("U-Net ops ok:", len(ops), "op timings, split", split, "s")
PY
# --precision: the Kokkos backend times its 16-bit activations and inner products in fp16 and
# declines 16-bit convolutions, saying so; every timing records its precision.
"$tessera" bench ops "$config" --precision fp16 --backend kokkos --reps 1 --warmup 0 --peak "$work/peak.json" \
  -o "$work/ops_fp16.json" --no-progress --kokkos-threads=2 >/dev/null
/usr/bin/python3 - "$work" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1] + "/ops_fp16.json"))["ops"]
convs = [o for o in ops if o["op_class"].startswith("conv_")]
assert convs and all(not o["supported"] and "no fp16 convolution" in o["why"] for o in convs), convs
acts = [o for o in ops if o["op_class"].startswith("activation_")]
assert acts and all(o["supported"] and o["precision"] == "fp16" for o in acts), acts
print("fp16 ops ok:", len(acts), "activation timings in fp16,", len(convs), "convolutions declined")
PY
test -z "$(ls "$work" | grep '\.tmp\.' || true)"
