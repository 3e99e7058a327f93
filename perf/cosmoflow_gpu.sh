#!/usr/bin/env bash
# Training throughput of a benchmark model on one NVIDIA GPU: Tessera (CUDA build, cuDNN
# backend) against PyTorch eager with cuDNN on the same GPU (perf/torch_gpu.py, the networks of
# the CPU peers on a CUDA device), both in this run, same precision; protocol of
# docs/benchmarks.md (2 warm-up steps, median of the timed steps). Then where the step goes on
# both sides, per layer and pass (perf/layer_table.py: `tessera train --profile` beside PyTorch's
# per-module CUDA events), so that every run says which layers hold the gap.
# Usage: perf/cosmoflow_gpu.sh [--model M] [--steps N] [--size S] [--batch B]
#          [--precision fp32|tf32|bf16|fp16] [--tf32] [--algo heuristic|benchmark] [--deterministic]
#          [--no-layers] [--torch-compile] [--out DIR] [--build DIR | --tessera PATH] [--device cpu]
#   --model: cosmoflow-small (default; 128^3, batch 4), unet3d-small (128^3, batch 2) or
#     cosmoflow-mlperf (the network of examples/cosmoflow, 128^3, batch 4)
#   --precision: Tessera's training.precision; PyTorch: TF32 allowed for tf32, autocast to bf16 or
#     fp16 (with its GradScaler) for bf16, fp16; --tf32 is --precision tf32
#   --tessera: time this tessera (a GPU bundle's, scripts/gpu_bundle.sh) instead of building one
#   --out: keep the metrics logs, the layer timings and the table (JSON) there
#   --torch-compile: also PyTorch's fastest variant through torch.compile (torch_compiled_samples_per_s)
#   --device cpu: the same on this machine's CPU with a CPU build (fp32, bf16; oneDNN's conv
#     bound), to check the script where there is no GPU
# Defaults: FP32 (no TF32 on either side), Tessera with timed algorithm choice
# (--cudnn-algorithms benchmark) among all of cuDNN's algorithms, the non-deterministic too, as
# PyTorch's default (--deterministic: Tessera's default, bit-for-bit repeatable algorithms only);
# PyTorch's best of {NCDHW, channels_last_3d} x {cudnn.benchmark off, on}.
# Last lines: the layer table's (tessera_step_ms=... largest_gap=...), then
#   model=M precision=P tessera_samples_per_s=X (min-max) torch_samples_per_s=Y ratio=Z conv_bound_fraction=F
#   [torch_compiled_samples_per_s=C ratio_vs_compiled=R]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=10 size="" batch="" precision=fp32 algo=benchmark deterministic=0 build=build/perf-cuda tessera=""
model=cosmoflow-small layers=1 out="" device=cuda compile=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model=$2; shift ;;
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --precision) precision=$2; shift ;;
    --tf32) precision=tf32 ;;
    --deterministic) deterministic=1 ;;
    --algo) algo=$2; shift ;;
    --no-layers) layers=0 ;;
    --torch-compile) compile=(--compile) ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    --device) device=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cosmoflow_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
# Checked before the GPU is looked for, so that a mistyped argument is named as such.
case $model in
  cosmoflow-small|cosmoflow-mlperf) : "${size:=128}" "${batch:=4}" ;;
  unet3d-small) : "${size:=128}" "${batch:=2}" ;;
  *) echo "cosmoflow_gpu.sh: --model takes cosmoflow-small, unet3d-small or cosmoflow-mlperf, not '$model'" >&2; exit 2 ;;
esac
[[ $precision =~ ^(fp32|tf32|bf16|fp16)$ ]] ||
  { echo "cosmoflow_gpu.sh: --precision takes fp32, tf32, bf16 or fp16, not '$precision'" >&2; exit 2; }
[[ $device == cuda || ($device == cpu && $precision =~ ^(fp32|bf16)$) ]] ||
  { echo "cosmoflow_gpu.sh: --device takes cpu (fp32 or bf16); the default is the GPU" >&2; exit 2; }
python=${TESSERA_PEER_PYTHON:-python3}
if [[ $device == cuda ]]; then
  nvidia-smi -L >/dev/null 2>&1 || { echo "cosmoflow_gpu.sh: no GPU visible (nvidia-smi -L failed)" >&2; exit 1; }
  "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
    { echo "cosmoflow_gpu.sh: $python has no CUDA-enabled PyTorch (set TESSERA_PEER_PYTHON)" >&2; exit 1; }
else
  "$python" -c 'import torch' 2>/dev/null ||
    { echo "cosmoflow_gpu.sh: $python has no PyTorch (scripts/install_deps.sh --for-perf; or set TESSERA_PEER_PYTHON)" >&2; exit 1; }
fi

if [[ -z $tessera && $device == cpu ]]; then
  source perf/common.sh
  build_perf build/perf tessera_cli
  tessera=build/perf/tessera
elif [[ -z $tessera ]]; then
  export CCACHE_DIR=${CCACHE_DIR:-/opt/tessera-deps/ccache}
  export NVCC_WRAPPER_DEFAULT_COMPILER=g++ PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/tessera-deps/cuda \
    -DCMAKE_CXX_COMPILER=/opt/tessera-deps/cuda/bin/nvcc_wrapper -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DTESSERA_ENABLE_ONEDNN=OFF -DTESSERA_ENABLE_CUDNN=ON -DTESSERA_ENABLE_PERF=ON -DTESSERA_ENABLE_TESTS=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)" --target tessera_cli >/dev/null
  tessera=$build/tessera
fi

# The cuDNN settings travel as flags (no environment variable configures Tessera).
# The precision is the config's training.precision (absent: fp32), which train and bench ops both read.
flags=(--kokkos-disable-warnings)
backend=onednn torch_choices=heuristic
if [[ $device == cuda ]]; then
  flags+=(--cudnn-algorithms "$algo" --cudnn-deterministic "$([[ $deterministic == 1 ]] && echo true || echo false)")
  backend=cudnn torch_choices=heuristic,benchmark
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" perf/cosmoflow_run.py model_config "$model" "$size" "$batch" "$((steps + 2))" "$work/run.json"
if [[ $precision != fp32 ]]; then
  "$python" -c 'import json, sys; c = json.load(open(sys.argv[1])); c["training"]["precision"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))' "$work/run.json" "$precision"
fi

"$tessera" info --kokkos-disable-warnings | grep -E "^(tessera|kokkos:|cudnn:)" || true
echo "== tessera: $model S=$size batch=$batch precision=$precision device=$device algorithms=$algo deterministic=$deterministic"
"$tessera" train "$work/run.json" "${flags[@]}" --metrics "$work/metrics.jsonl" --quiet | tail -n 1
tessera_rate=$("$python" perf/cosmoflow_run.py rate "$work/metrics.jsonl" "$batch")

echo "== conv-bound limit: $backend's own conv rate on the model's shapes"
"$tessera" bench ops "$work/run.json" "${flags[@]}" --backend "$backend" --reps 5 -o "$work/ops.json" --no-progress \
  >/dev/null
bench=$("$python" perf/cosmoflow_run.py conv_limit "$work/ops.json" "$backend")
echo "$bench"
limit=$(sed -n 's/.*conv-bound limit \([0-9.]*\) samples\/s.*/\1/p' <<<"$bench")

echo "== torch peer (best of NCDHW / channels_last_3d, cudnn.benchmark ${torch_choices/,/ \/ })"
layer_flags=()
[[ $layers == 1 ]] && layer_flags=(--layers "$work/torch_layers.json" --config "$work/run.json")
torch_out=$(cd perf && "$python" torch_gpu.py "$size" "$batch" "$steps" --model "$model" --precision "$precision" \
  --choices "$torch_choices" --device "$device" "${layer_flags[@]}" "${compile[@]}")
echo "$torch_out"
best=$(sed -n 's/^best_samples_per_s=\([0-9.]*\)$/\1/p' <<<"$torch_out")
compiled=$(sed -n 's/^compiled_samples_per_s=\([0-9.]*\).*/\1/p' <<<"$torch_out")

if [[ $layers == 1 ]]; then
  echo "== where the step goes: tessera train --profile beside PyTorch's per-layer times (ms per step)"
  "$tessera" train "$work/run.json" "${flags[@]}" --profile --metrics "$work/profile.jsonl" --quiet >/dev/null
  "$python" perf/layer_table.py "$work/run.json" "$work/profile.jsonl" "$work/torch_layers.json" \
    --json "$work/layer_table.json"
fi
[[ -z $out ]] || { mkdir -p "$out" && cp "$work"/*.json "$work"/*.jsonl "$out/"; }

"$python" - "$tessera_rate" "$best" "$limit" "$work/metrics.jsonl" "$model" "$precision" "$compiled" <<'PY'
import json, sys
t, p, lim = map(float, sys.argv[1:4])
compiled = f" torch_compiled_samples_per_s={float(sys.argv[7]):.2f} ratio_vs_compiled={t / float(sys.argv[7]):.2f}" \
    if sys.argv[7] else ""
steps = [e for e in map(json.loads, open(sys.argv[4])) if e["event"] == "train"][2:]
rates = sorted(e["samples_per_s"] for e in steps)
print(f"model={sys.argv[5]} precision={sys.argv[6]} "
      f"tessera_samples_per_s={t:.2f} ({rates[0]:.2f}-{rates[-1]:.2f} over {len(rates)} steps) "
      f"torch_samples_per_s={p:.2f} ratio={t / p:.2f} conv_bound_fraction={t / lim:.2f}{compiled}")
PY
