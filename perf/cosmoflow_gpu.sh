#!/usr/bin/env bash
# cosmoflow-small training throughput on one NVIDIA GPU: Tessera (CUDA build, cuDNN backend)
# against PyTorch eager with cuDNN on the same GPU (perf/torch_cosmoflow_gpu.py, the network
# of perf/torch_cosmoflow.py on a CUDA device), both in this run, same precision;
# protocol of docs/benchmarks.md (2 warm-up steps, median of the timed steps).
# Usage: perf/cosmoflow_gpu.sh [--steps N] [--size S] [--batch B] [--precision fp32|tf32|bf16|fp16]
#          [--tf32] [--algo heuristic|benchmark] [--deterministic] [--build DIR | --tessera PATH]
#   --precision: Tessera's training.precision; PyTorch: TF32 allowed for tf32, autocast to bf16 or
#     fp16 (with its GradScaler) for bf16, fp16; --tf32 is --precision tf32
#   --tessera: time this tessera (a GPU bundle's, scripts/gpu_bundle.sh) instead of building one
# Defaults: S=128, batch 4, FP32 (no TF32 on either side), Tessera with timed algorithm choice
# (--cudnn-algorithms benchmark) among all of cuDNN's algorithms, the non-deterministic too, as
# PyTorch's default (--deterministic: Tessera's default, bit-for-bit repeatable algorithms only);
# PyTorch's best of {NCDHW, channels_last_3d} x {cudnn.benchmark off, on}.
# Last line: tessera_samples_per_s=X (min-max) torch_samples_per_s=Y ratio=Z conv_bound_fraction=F
set -euo pipefail
cd "$(dirname "$0")/.."
steps=10 size=128 batch=4 precision=fp32 algo=benchmark deterministic=0 build=build/perf-cuda tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --batch) batch=$2; shift ;;
    --precision) precision=$2; shift ;;
    --tf32) precision=tf32 ;;
    --deterministic) deterministic=1 ;;
    --algo) algo=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cosmoflow_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
# Checked before the GPU is looked for, so that a mistyped precision is named as such.
[[ $precision =~ ^(fp32|tf32|bf16|fp16)$ ]] ||
  { echo "cosmoflow_gpu.sh: --precision takes fp32, tf32, bf16 or fp16, not '$precision'" >&2; exit 2; }
python=${TESSERA_PEER_PYTHON:-python3}
nvidia-smi -L >/dev/null 2>&1 || { echo "cosmoflow_gpu.sh: no GPU visible (nvidia-smi -L failed)" >&2; exit 1; }
"$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
  { echo "cosmoflow_gpu.sh: $python has no CUDA-enabled PyTorch (set TESSERA_PEER_PYTHON)" >&2; exit 1; }

if [[ -z $tessera ]]; then
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
cudnn_flags=(--cudnn-algorithms "$algo" --cudnn-deterministic "$([[ $deterministic == 1 ]] && echo true || echo false)")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$work/run.json"
if [[ $precision != fp32 ]]; then
  "$python" -c 'import json, sys; c = json.load(open(sys.argv[1])); c["training"]["precision"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))' "$work/run.json" "$precision"
fi

"$tessera" info --kokkos-disable-warnings | grep -E "^(tessera|kokkos:|cudnn:)" || true
echo "== tessera: cosmoflow-small S=$size batch=$batch precision=$precision algorithms=$algo deterministic=$deterministic"
"$tessera" train "$work/run.json" "${cudnn_flags[@]}" --metrics "$work/metrics.jsonl" --quiet --kokkos-disable-warnings \
  | tail -n 1
tessera_rate=$("$python" perf/cosmoflow_run.py rate "$work/metrics.jsonl" "$batch")

echo "== conv-bound limit: cuDNN's own conv rate on the model's shapes"
"$tessera" bench ops "$work/run.json" "${cudnn_flags[@]}" --backend cudnn --reps 5 -o "$work/ops.json" --no-progress \
  --kokkos-disable-warnings >/dev/null
bench=$("$python" perf/cosmoflow_run.py conv_limit "$work/ops.json" cudnn)
echo "$bench"
limit=$(sed -n 's/.*conv-bound limit \([0-9.]*\) samples\/s.*/\1/p' <<<"$bench")

echo "== torch peer (best of NCDHW / channels_last_3d, cudnn.benchmark off / on)"
torch_out=$(cd perf && "$python" torch_cosmoflow_gpu.py "$size" "$batch" "$steps" default,channels_last "$precision" \
  heuristic,benchmark)
echo "$torch_out"
best=$(sed -n 's/^best_samples_per_s=\([0-9.]*\)$/\1/p' <<<"$torch_out")

"$python" - "$tessera_rate" "$best" "$limit" "$work/metrics.jsonl" "$batch" <<'PY'
import json, sys
t, p, lim = map(float, sys.argv[1:4])
steps = [e for e in map(json.loads, open(sys.argv[4])) if e["event"] == "train"][2:]
rates = sorted(e["samples_per_s"] for e in steps)
print(f"tessera_samples_per_s={t:.2f} ({rates[0]:.2f}-{rates[-1]:.2f} over {len(rates)} steps) "
      f"torch_samples_per_s={p:.2f} ratio={t / p:.2f} conv_bound_fraction={t / lim:.2f}")
PY
