#!/usr/bin/env bash
# What one call on a lent GPU machine runs (docs/gpu.md), from the repository root, with the
# bundle of scripts/gpu_bundle.sh carried in build/bundle/pack/. Nothing is built there.
#   machine   nvidia-smi, the driver, glibc, PyTorch and its CUDA packages
#   info      unpacks the bundle; `tessera info` twice: the first run pays the driver's PTX
#             compilation for this GPU of the kernels it starts with, the second finds them cached
#   tests     the bundle's GPU tests (ctest -L gpu): cuDNN against the Kokkos CUDA kernels,
#             every layer type against the CPU build, a GPU checkpoint resumed on the CPU,
#             2 to 8 ranks sharing the GPU under every layout against 1 rank, bf16 split layers,
#             a population of 2 trainers
#   fp32, tf32, bf16, fp16  perf/cosmoflow_gpu.sh: cosmoflow-small (128^3, batch 4) against this
#             machine's PyTorch in that precision, with the per-layer table of both sides (the
#             logs, timings and table come back in $OUT/cosmoflow-small_P/)
#   unet, mlperf  (only when named) the same for unet3d-small (128^3, batch 2) and the MLPerf
#             CosmoFlow network (128^3, batch 4) in bf16 ($OUT/unet3d-small_bf16/, ...)
#   compile   (only when named) cosmoflow-small in bf16 with PyTorch's fastest variant also
#             through torch.compile (torch_compiled_samples_per_s, ratio_vs_compiled)
#   portability  (only when named) perf/portability.sh --gpu: bench peak, ops and model of
#             cosmoflow-small and unet3d-small (S=32) on Kokkos CUDA and cuDNN; the result files
#             come back in $OUT/portability/ to merge with a CPU's (docs/benchmarks.md)
#   mixed     (only when named) cosmoflow-small, 32^3, batch 4, 40 steps, trained in fp32, bf16
#             and fp16: each one's first and last loss (fp16: its loss scale and skipped steps)
#   peak, jit (only when named) `tessera bench peak`: the device's FMA rate and triad bandwidth;
#             the PTX compilation of all of tessera's kernels at once (CUDA_MODULE_LOADING=EAGER),
#             from an empty cache and then cached
#   nsys      (only when named) Nsight Systems on 4 training steps of cosmoflow-small in bf16:
#             the kernel summary and the CUDA API summary (launch gaps)
#   profile   (only when named) Nsight Compute on the kernels of `tessera bench ops` matching
#             TESSERA_PROFILE_KERNEL (default: the few-channel weight gradient)
# Each step has its own time limit inside an overall budget (TESSERA_CHECK_SECONDS, default 540:
# a device call may run 600): a step that would start too late is skipped and says so. Step
# names are checked before anything runs. Writes gpu_check.log and results.txt (name.status,
# name.seconds, figures) to $OUT (else build/gpu-check).
# Usage: scripts/gpu_check.sh [STEP ...]   (default: machine tests fp32 tf32 bf16 fp16; info
# always runs)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
out=${OUT:-$root/build/gpu-check}
mkdir -p "$out"
exec > >(tee -a "$out/gpu_check.log") 2>&1
budget=${TESSERA_CHECK_SECONDS:-540}
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(machine tests fp32 tf32 bf16 fp16)
pack=$root/build/bundle/pack/tessera-bundle.tar.xz
B=${TESSERA_BUNDLE_DIR:-/tmp/tessera-bundle}
results=$out/results.txt
: >"$results"
record() { echo "$1=$2" | tee -a "$results"; }

# run_step NAME LIMIT COMMAND...: runs COMMAND under min(LIMIT, what is left of the budget).
run_step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 20)); then
    echo "=== $name: skipped, ${left}s of the budget left"
    record "$name.status" skipped
    return
  fi
  echo "=== $name (at ${SECONDS}s, limit ${limit}s)"
  local start=$SECONDS
  timeout -k 5 "$limit" bash -c '"$@"' _ "$@"  # the steps are shell functions, exported below
  local rc=$?
  record "$name.status" "$rc"
  record "$name.seconds" $((SECONDS - start))
}

machine() {
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  ldd --version | head -n 1
  echo "cores: $(nproc)"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  python3 -m pip list 2>/dev/null | grep -iE '^(nvidia-(cudnn|cublas|cuda-runtime|cusparse|nvjitlink)|torch) '
  command -v ctest cmake mpirun nsys ncu compute-sanitizer || true
}

# Nsight Systems on 4 training steps of cosmoflow-small (128^3, batch 4) in PRECISION: the GPU
# kernels' summary (time, calls, share) and the gaps between them, for the per-layer tables'
# "rest" and launch gaps. The report comes back as $out/nsys_P.nsys-rep when small enough.
nsys_step() {
  command -v nsys >/dev/null || { echo "no nsys on this machine"; return 1; }
  local p=${1:-bf16} work
  work=$(mktemp -d)
  python3 perf/cosmoflow_run.py config 128 4 4 "$work/run.json" "training.precision=\"$p\"" || return 1
  nsys profile --stats=false --force-overwrite true -o "$work/nsys_$p" --trace cuda,nvtx \
    tessera train "$work/run.json" --cudnn-algorithms benchmark --cudnn-deterministic false --quiet \
    --kokkos-disable-warnings || return 1
  nsys stats --report cuda_gpu_kern_sum --report cuda_api_sum --format table "$work/nsys_$p.nsys-rep" 2>&1 |
    head -n 80
  local size; size=$(stat -c %s "$work/nsys_$p.nsys-rep")
  ((size < 20 * 1048576)) && cp "$work/nsys_$p.nsys-rep" "$out/"
  rm -rf "$work"
}

unpack_and_info() {
  rm -rf "$B" && mkdir -p "$B" && tar -C "$B" -xJf "$pack" || return 1
  # shellcheck disable=SC1091
  . "$B/cuda/env.sh"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  rm -rf "$CUDA_CACHE_PATH"
  local t0=$SECONDS
  tessera info || return 1
  record info_first_run_s $((SECONDS - t0))
  t0=$SECONDS
  tessera info --kokkos-disable-warnings >/dev/null || return 1
  record info_cached_run_s $((SECONDS - t0))
}

# The driver's compilation of the whole tessera binary's PTX, all kernels at once, then cached.
jit() {
  rm -rf "$CUDA_CACHE_PATH"
  local t0=$SECONDS
  CUDA_MODULE_LOADING=EAGER tessera info --kokkos-disable-warnings >/dev/null || return 1
  record jit_all_kernels_first_s $((SECONDS - t0))
  t0=$SECONDS
  CUDA_MODULE_LOADING=EAGER tessera info --kokkos-disable-warnings >/dev/null || return 1
  record jit_all_kernels_cached_s $((SECONDS - t0))
  du -sh "$CUDA_CACHE_PATH"
}

gpu_tests() {
  (cd "$B/cuda/tests" && ctest -L gpu -j 4 --output-on-failure --timeout 240 --output-junit "$out/gpu_tests.xml") &&
    return 0
  # A failing 2-rank run again under compute-sanitizer, which names the kernel and the access.
  if command -v compute-sanitizer >/dev/null && grep -q 'failures="[1-9]' "$out/gpu_tests.xml" &&
    grep -A3 '2 ranks sharing' "$out/gpu_tests.xml" | grep -q '<failure'; then
    (cd "$B/cuda/tests" && timeout 100 "$B/cuda/bin/mpirun" -np 2 compute-sanitizer --print-limit 4 \
      "$B/cuda/bin/tessera_spatial_equivalence" '{"depth": 2}' 3d 2>&1 | tail -n 60)
  fi
  return 1
}

peak() {
  tessera bench peak --no-progress --kokkos-disable-warnings -o "$out/peak.json" && cat "$out/peak.json"
}

# Nsight Compute on the kernels of `tessera bench ops` (cosmoflow-small, 128^3, batch 4) whose
# names match TESSERA_PROFILE_KERNEL (default: the few-channel weight gradient).
profile() {
  command -v ncu >/dev/null || { echo "no ncu on this machine"; return 1; }
  local work; work=$(mktemp -d)
  python3 perf/cosmoflow_run.py config 128 4 3 "$work/run.json" || return 1
  ncu --clock-control none --kernel-name-base mangled -k "regex:${TESSERA_PROFILE_KERNEL:-few_channel}" \
    --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section WarpStateStats \
    tessera bench ops "$work/run.json" --cudnn-algorithms benchmark --backend cudnn --reps 1 --warmup 0 --no-progress --kokkos-disable-warnings \
    -o "$work/ops.json" 2>&1 | grep -vE '^==PROF==' | tail -n 120
}

model_vs_torch() {  # model_vs_torch MODEL PRECISION [FLAGS]: perf/cosmoflow_gpu.sh, its files kept in $out
  perf/cosmoflow_gpu.sh --tessera "$B/cuda/bin/tessera" --model "$1" --precision "$2" --out "$out/$1_$2" "${@:3}"
}

portability() {
  perf/portability.sh --gpu --tessera "$B/cuda/bin/tessera" --out "$out/portability"
}

# Whether the mixed-precision runs learn as the fp32 run does, not how fast they are:
# cosmoflow-small, 32^3, batch 4, 40 steps, trained in fp32, bf16 and fp16; each one's first and
# last loss, fp16's loss scale and skipped steps. The metrics logs are kept in $out as mixed_P.jsonl.
mixed_precision_runs() {
  local work p last rc=0
  work=$(mktemp -d)
  python3 perf/cosmoflow_run.py config 32 4 40 "$work/run.json" || return 1
  for p in fp32 bf16 fp16; do
    python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["training"]["precision"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))' "$work/run.json" "$p" || return 1
    echo "== tessera train, precision $p"
    tessera train "$work/run.json" --metrics "$work/m_$p.jsonl" --kokkos-disable-warnings | tail -n 5
    ((PIPESTATUS[0] == 0)) || { echo "mixed: tessera train in $p failed"; rc=1; }
    [[ -f $work/m_$p.jsonl ]] && cp "$work/m_$p.jsonl" "$out/mixed_$p.jsonl"
  done
  for p in fp32 bf16 fp16; do
    # The summary line goes to stderr (the log): stdout is the last loss, for record.
    last=$(python3 - "$work/m_$p.jsonl" "$p" <<'PY'
import json, os, sys
path, p = sys.argv[1:3]
if not os.path.exists(path):
    print(f"mixed_{p}: no metrics log (the run failed before its first step)", file=sys.stderr)
    sys.exit(1)
events = [json.loads(line) for line in open(path) if line.strip()]
train = [e for e in events if e.get("event") == "train"]
if not train:
    print(f"mixed_{p}: no train record; the log has:", file=sys.stderr)
    for e in events:
        print(f"  {json.dumps(e)}", file=sys.stderr)
    sys.exit(1)
ran = next((e["precision"] for e in events if "precision" in e), p)
if ran != p:  # a run that fell back to another precision would compare nothing
    print(f"mixed_{p}: tessera trained in {ran}, not {p}", file=sys.stderr)
    sys.exit(1)
fmt = lambda v: f"{v:.6g}" if isinstance(v, (int, float)) else str(v)  # a non-finite loss is null in JSON
last = train[-1]
extra = "".join(f" {k}={fmt(last[k])}" for k in ("loss_scale", "skipped_steps") if last.get(k) is not None)
print(f"mixed_{p}: first_loss={fmt(train[0].get('loss'))} last_loss={fmt(last.get('loss'))}{extra}",
      file=sys.stderr)
print(fmt(last.get("loss")))
PY
    ) || { rc=1; continue; }
    record "mixed_${p}_last_loss" "$last"
  done
  rm -rf "$work"
  return "$rc"
}

export root out B pack results
export -f record machine unpack_and_info jit gpu_tests peak profile model_vs_torch portability mixed_precision_runs \
  nsys_step
known=" machine tests peak fp32 tf32 bf16 fp16 unet mlperf compile portability mixed jit nsys profile "
for s in "${steps[@]}"; do  # before anything runs: a typo must not cost device time
  [[ $known == *" $s "* ]] || { echo "gpu_check.sh: unknown step '$s' (one of:$known)"; exit 2; }
done
echo "== gpu_check.sh $(date -u +%FT%TZ), budget ${budget}s, steps: ${steps[*]}"
[[ -f $pack ]] || { echo "gpu_check.sh: no bundle at $pack (scripts/gpu_bundle.sh makes it; carry build/bundle/pack)"; exit 1; }
for s in "${steps[@]}"; do [[ $s == machine ]] && run_step machine 60 machine; done
run_step info 180 unpack_and_info
# shellcheck disable=SC1091
[[ -f $B/cuda/env.sh ]] && . "$B/cuda/env.sh"
for s in "${steps[@]}"; do
  case $s in
    machine) ;;
    tests) run_step tests 180 gpu_tests ;;
    peak) run_step peak 40 peak ;;
    fp32|tf32|bf16|fp16) run_step "cosmoflow_$s" 150 model_vs_torch cosmoflow-small "$s" ;;
    unet) run_step unet_bf16 150 model_vs_torch unet3d-small bf16 ;;
    mlperf) run_step mlperf_bf16 150 model_vs_torch cosmoflow-mlperf bf16 ;;
    compile) run_step compile_bf16 200 model_vs_torch cosmoflow-small bf16 --no-layers --torch-compile ;;
    portability) run_step portability 150 portability ;;
    mixed) run_step mixed 150 mixed_precision_runs ;;
    jit) run_step jit 60 jit ;;
    nsys) run_step nsys 90 nsys_step bf16 ;;
    profile) run_step profile 90 profile ;;
  esac
done
echo "== summary (${SECONDS}s)"
cat "$results"
grep -hE "^(model=|tessera_step_ms=|pp_app=)" "$out/gpu_check.log" || true
