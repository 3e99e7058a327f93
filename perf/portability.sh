#!/usr/bin/env bash
# Performance portability of training on this machine with `tessera bench`: the measured
# limits (bench peak), every op of cosmoflow-small and unet3d-small on each backend (bench
# ops), their training steps (bench model), then the report over three platforms of this one
# CPU: Kokkos on one thread (its OpenMP execution space on one thread, standing in for Kokkos
# Serial: the kernels run in the default execution space only), Kokkos on all threads and
# oneDNN on all threads (oneDNN's model step runs "auto": oneDNN where it has the op, Kokkos
# for the rest, such as batch norm), and, on a CPU with bf16 instructions, oneDNN in bf16 on
# all threads: a fourth platform whose efficiencies are against the bf16 peak and whose
# application efficiency is compared with bf16 runs only (docs/benchmarks.md).
# Three backends of one CPU are not three architectures: the PP figures say how evenly the
# backends use this machine, not how portable the code is across hardware
# (docs/benchmarks.md). Results, plots and the report go to --out.
# The limits are measured first unless --peak names a `tessera bench peak` result of this
# machine (taken when it was idle: on busy cores the measured peak is too low).
# --gpu (a CUDA build's tessera, e.g. a GPU bundle's: scripts/gpu_check.sh runs it): the
# platforms are the GPU's, Kokkos CUDA (kokkos-cuda@GPU) and cuDNN (`auto`: cuDNN where it has
# the op, the Kokkos CUDA kernels for the rest; cudnn@GPU), fp32 only; their result files merge
# with a CPU's in `tessera bench report` (the same --size) for PP across a CPU and a GPU.
# Usage: perf/portability.sh [--size S] [--reps R] [--steps N] [--threads T] [--out DIR]
#                            [--peak FILE] [--build DIR | --tessera BIN] [--gpu]
# Last line: pp_app=MODEL:X,... pp_arch=MODEL:Y,... best_conv_arch_eff=Z
set -euo pipefail
cd "$(dirname "$0")/.."
size=32 reps=3 steps=3 threads=$(nproc) out=build/portability build=build/perf tessera="" peak="" gpu=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift ;;
    --reps) reps=$2; shift ;;
    --steps) steps=$2; shift ;;
    --threads) threads=$2; shift ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    --peak) peak=$2; shift ;;
    --gpu) gpu=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "portability.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh

# gpu_platforms TESSERA SIZE REPS STEPS OUT: ops and steps of both models on the GPU's two
# platforms, Kokkos CUDA and cuDNN (`auto`), labelled with the GPU's name.
gpu_platforms() {
  local tessera=$1 size=$2 reps=$3 steps=$4 out=$5 name model config
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | sed 's/^NVIDIA //; s/[ -].*//')
  [[ -n $name ]] || { echo "portability.sh: --gpu, but nvidia-smi names no GPU" >&2; return 1; }
  for model in cosmoflow_small unet3d_small; do
    config=examples/$model.json
    echo "== $model at S=$size on the $name: ops (Kokkos CUDA, cuDNN)"
    "$tessera" bench ops "$config" --size "$size" --reps "$reps" --backend kokkos --backend cudnn \
      --platform "kokkos=kokkos-cuda@$name" --platform "cudnn=cudnn@$name" \
      --peak "$out/peak.json" -o "$out/${model}_ops.json" --no-progress "${k[@]}" >/dev/null || return 1
    echo "== $model at S=$size on the $name: training steps"
    "$tessera" bench model "$config" --size "$size" --steps "$steps" --warmup 1 --backend kokkos --backend auto \
      --platform "kokkos=kokkos-cuda@$name" --platform "auto=cudnn@$name" --ops "$out/${model}_ops.json" \
      --peak "$out/peak.json" -o "$out/${model}_model.json" --no-progress "${k[@]}" | grep -E '^(platform|kokkos|auto|cudnn)'
  done
}
if [[ -z $tessera ]]; then
  build_perf "$build" tessera_cli
  tessera=$build/tessera
fi
export OMP_PROC_BIND=false
mkdir -p "$out"
[[ -z $peak ]] || peak=$(realpath "$peak")
rm -f "$out"/*.json "$out"/*.svg
echo "== load before: $(uptime)"
k=(--kokkos-disable-warnings)
if [[ -n $peak ]]; then
  cp "$peak" "$out/peak.json"
else
  "$tessera" bench peak -o "$out/peak.json" --no-progress --kokkos-threads="$threads" "${k[@]}"
fi
if [[ $gpu == 1 ]]; then
  gpu_platforms "$tessera" "$size" "$reps" "$steps" "$out"
  echo "== report"
  "$tessera" bench report "$out"/*.json --cascade "$out/cascade.svg" --roofline "$out/roofline.svg" "${k[@]}" |
    tee "$out/report.txt"
  exit "${PIPESTATUS[0]}"
fi
bf16=0
"$tessera" info "${k[@]}" | grep -q '^onednn isa:.*bf16 instructions: yes' && bf16=1
[[ $bf16 == 1 ]] || echo "== no bf16 instructions on this CPU: no bf16 platform"
for model in cosmoflow_small unet3d_small; do
  config=examples/$model.json
  echo "== $model at S=$size: ops, $threads thread(s)"
  "$tessera" bench ops "$config" --size "$size" --reps "$reps" --backend kokkos --backend onednn \
    --peak "$out/peak.json" -o "$out/${model}_ops.json" --no-progress --kokkos-threads="$threads" "${k[@]}" >/dev/null
  echo "== $model at S=$size: ops, 1 thread"
  "$tessera" bench ops "$config" --size "$size" --reps "$reps" --backend kokkos --peak "$out/peak.json" \
    -o "$out/${model}_ops_1t.json" --no-progress --kokkos-threads=1 "${k[@]}" >/dev/null
  echo "== $model at S=$size: training steps"
  "$tessera" bench model "$config" --size "$size" --steps "$steps" --warmup 1 --backend kokkos --backend auto \
    --platform "auto=onednn@${threads}t" --ops "$out/${model}_ops.json" --peak "$out/peak.json" \
    -o "$out/${model}_model.json" --no-progress --kokkos-threads="$threads" "${k[@]}" | grep -E '^(platform|kokkos|onednn)'
  "$tessera" bench model "$config" --size "$size" --steps "$steps" --warmup 1 --backend kokkos \
    --ops "$out/${model}_ops_1t.json" --peak "$out/peak.json" -o "$out/${model}_model_1t.json" --no-progress \
    --kokkos-threads=1 "${k[@]}" | grep -E '^kokkos'
  if [[ $bf16 == 1 ]]; then
    # The step also runs what oneDNN lacks in bf16 (batch norm) on Kokkos: bench model needs
    # those timings too, which stay out of the report (bf16/): the platform is oneDNN's.
    echo "== $model at S=$size: ops and training steps in bf16, $threads thread(s)"
    mkdir -p "$out/bf16"
    for b in onednn kokkos; do
      "$tessera" bench ops "$config" --size "$size" --reps "$reps" --backend "$b" --precision bf16 \
        --platform "$b=onednn-bf16@${threads}t" --peak "$out/peak.json" -o "$out/bf16/${model}_ops_$b.json" \
        --no-progress --kokkos-threads="$threads" "${k[@]}" >/dev/null
    done
    cp "$out/bf16/${model}_ops_onednn.json" "$out/${model}_ops_bf16.json"
    "$tessera" bench model "$config" --size "$size" --steps "$steps" --warmup 1 --backend auto --precision bf16 \
      --platform "auto=onednn-bf16@${threads}t" --ops "$out/bf16/${model}_ops_onednn.json" \
      --ops "$out/bf16/${model}_ops_kokkos.json" --peak "$out/peak.json" -o "$out/${model}_model_bf16.json" \
      --no-progress --kokkos-threads="$threads" "${k[@]}" | grep -E '^(platform|onednn)'
  fi
done
echo "== load after: $(uptime)"
echo "== report"
"$tessera" bench report "$out"/*.json --cascade "$out/cascade.svg" --roofline "$out/roofline.svg" "${k[@]}" |
  tee "$out/report.txt"
