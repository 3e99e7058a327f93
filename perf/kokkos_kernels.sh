#!/usr/bin/env bash
# Tessera's own kernels against the machine's limits: every op of cosmoflow-small and
# unet3d-small on the Kokkos backend at S=64 (tensors far larger than the caches), in fp32 and
# bf16, as a fraction of the measured triad bandwidth (memory-bound ops) or FMA peak
# (convolutions); the same with a second, older `tessera` (--before) for the before/after
# columns; batch norm with the activation fused into it against the two apart (Kokkos alone, two alternating rounds); the whole
# training step on Kokkos against `auto` (oneDNN convolutions, Kokkos for the rest); and the
# application performance portability over the three CPU platforms of perf/portability.sh
# (Kokkos on 1 thread, Kokkos and oneDNN on all threads). Tables and the JSON results go to
# --out (docs/benchmarks.md, "Tessera's own kernels").
# The limits are measured first unless --peak names a `tessera bench peak` result of this
# machine taken when it was idle.
# Usage: perf/kokkos_kernels.sh [--size S] [--reps R] [--steps N] [--threads T] [--out DIR]
#                               [--before BIN] [--peak FILE] [--no-pp] [--build DIR | --tessera BIN]
# Last line: kokkos_memory_bound_median=… kokkos_memory_bound_min=… kokkos_conv_largest=…
#   kokkos_step_vs_auto_cosmoflow=… kokkos_step_vs_auto_unet=… auto_step_arch_unet=…
#   fused_bn_act_speedup=… pp_app_cosmoflow=… pp_app_unet=…
set -euo pipefail
cd "$(dirname "$0")/.."
size=64 reps=3 steps=3 threads=$(nproc) out=build/kokkos_kernels build=build/perf tessera="" before="" peak=""
pp=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift ;;
    --reps) reps=$2; shift ;;
    --steps) steps=$2; shift ;;
    --threads) threads=$2; shift ;;
    --out) out=$2; shift ;;
    --before) before=$2; shift ;;
    --peak) peak=$2; shift ;;
    --no-pp) pp=0 ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "kokkos_kernels.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
[[ -z $before || -x $before ]] || { echo "kokkos_kernels.sh: --before $before is not a program" >&2; exit 2; }
export OMP_PROC_BIND=false
mkdir -p "$out"
rm -f "$out"/*.json
[[ -z $peak ]] || cp "$peak" "$out/peak.json"
k=(--kokkos-disable-warnings --no-progress)
echo "== load before: $(uptime)"
[[ -n $peak ]] || "$tessera" bench peak -o "$out/peak.json" --kokkos-threads="$threads" "${k[@]}" >/dev/null
bf16=0
"$tessera" info --kokkos-disable-warnings | grep -q '^onednn isa:.*bf16 instructions: yes' && bf16=1
ops() {  # ops BIN LABEL MODEL PRECISION [bench ops flags]: the model's ops, results in LABEL_MODEL_PRECISION.json
  local bin=$1 label=$2 model=$3 precision=$4; shift 4
  "$bin" bench ops "examples/$model.json" --size "$size" --reps "$reps" --precision "$precision" \
    --peak "$out/peak.json" -o "$out/${label}_${model}_${precision}.json" "${k[@]}" "$@" >/dev/null
}
for model in cosmoflow_small unet3d_small; do
  echo "== $model at S=$size: Kokkos ops, fp32 and bf16, $threads thread(s)"
  ops "$tessera" after "$model" fp32 --backend kokkos --backend onednn --kokkos-threads="$threads"
  ops "$tessera" after "$model" bf16 --backend kokkos --kokkos-threads="$threads"
  if [[ -n $before ]]; then
    echo "== $model at S=$size: the same ops with $before"
    ops "$before" before "$model" fp32 --backend kokkos --kokkos-threads="$threads"
    ops "$before" before "$model" bf16 --backend kokkos --kokkos-threads="$threads"
  fi
  echo "== $model at S=$size: training steps on kokkos and auto"
  "$tessera" bench model "examples/$model.json" --size "$size" --steps "$steps" --warmup 1 --backend kokkos \
    --backend auto --platform "auto=onednn@${threads}t" --ops "$out/after_${model}_fp32.json" \
    --peak "$out/peak.json" -o "$out/model_${model}_fp32.json" --kokkos-threads="$threads" "${k[@]}" |
    grep -E '^(kokkos|onednn|auto)' || true
  if [[ $pp == 1 ]]; then
    echo "== $model at S=$size: Kokkos on 1 thread (the third platform)"
    ops "$tessera" one_thread "$model" fp32 --backend kokkos --kokkos-threads=1
    "$tessera" bench model "examples/$model.json" --size "$size" --steps "$steps" --warmup 1 --backend kokkos \
      --ops "$out/one_thread_${model}_fp32.json" --peak "$out/peak.json" -o "$out/model1t_${model}_fp32.json" \
      --kokkos-threads=1 "${k[@]}" >/dev/null
  fi
done
# Batch norm and its activation apart: the same model with the fusing pass turned off.
python3 - "examples/unet3d_small.json" "$out/unet3d_small_unfused.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["model"]["fuse_batch_norm_activation"] = False
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
# Fused and apart timed in turn, Kokkos alone, twice each: on this kind of machine one run's
# op times move by tens of percent between minutes, and the fused model's times from the
# two-backend run above were taken minutes before the unfused ones (ratios 0.86-1.40 over four
# runs, against 1.26-1.33 in alternating pairs).
echo "== unet3d_small at S=$size: batch norm and activation fused and apart, alternately"
for round in 1 2; do
  "$tessera" bench ops examples/unet3d_small.json --size "$size" --reps "$reps" --backend kokkos \
    --peak "$out/peak.json" -o "$out/fused${round}_unet3d_small_fp32.json" --kokkos-threads="$threads" "${k[@]}" >/dev/null
  "$tessera" bench ops "$out/unet3d_small_unfused.json" --size "$size" --reps "$reps" --backend kokkos \
    --peak "$out/peak.json" -o "$out/unfused${round}_unet3d_small_fp32.json" --kokkos-threads="$threads" "${k[@]}" >/dev/null
done
pp_line=""
if [[ $pp == 1 ]]; then
  echo "== portability over kokkos@1t, kokkos@${threads}t, onednn@${threads}t"
  pp_dir=$out/portability
  mkdir -p "$pp_dir"
  cp "$out/peak.json" "$pp_dir/"
  for model in cosmoflow_small unet3d_small; do
    cp "$out/after_${model}_fp32.json" "$pp_dir/${model}_ops.json"
    cp "$out/one_thread_${model}_fp32.json" "$pp_dir/${model}_ops_1t.json"
    cp "$out/model_${model}_fp32.json" "$pp_dir/${model}_model.json"
    cp "$out/model1t_${model}_fp32.json" "$pp_dir/${model}_model_1t.json"
  done
  "$tessera" bench report "$pp_dir"/*.json --kokkos-disable-warnings > "$out/portability.txt"
  pp_line=$(tail -n 1 "$out/portability.txt")
fi
echo "== load after: $(uptime)"
python3 perf/kokkos_kernels.py --out "$out" --bf16-instructions "$bf16" --pp "$pp_line"
