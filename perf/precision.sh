#!/usr/bin/env bash
# bf16 mixed precision on this CPU: Tessera trains cosmoflow-small (S=64, batch 4) and
# unet3d-small (64^3, batch 2) in fp32 and in bf16 (`--precision bf16`), one build, one run,
# against PyTorch's CPU autocast bf16 (perf/torch_cosmoflow.py, perf/torch_unet3d.py; the best
# of its default and channels_last formats); protocol of docs/benchmarks.md, same threads.
# Usage: perf/precision.sh [--threads N] [--steps N] [--size S] [--models "cosmoflow unet"]
#                          [--build DIR | --tessera PATH]
#   --size: both models' input edge (default 64; 32 for a quick check)
# Per model: model=M fp32_samples_per_s= bf16_samples_per_s= speedup= fp32_activation_mb=
#   bf16_activation_mb= torch_fp32= torch_bf16= (n/a where not measured). Last line:
# bf16_speedup=X bf16_activation_memory_ratio=R torch_bf16_ratio=T unet_bf16_speedup=U isa=I
#   (X, R, T: cosmoflow-small's; R bf16 over fp32 activation MiB; T Tessera bf16 over torch bf16)
# The peer runs with TESSERA_PEER_PYTHON (default /usr/bin/python3, Debian's python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2 steps=10 size=64 models="cosmoflow unet" build=build/perf tessera=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --steps) steps=$2; shift ;;
    --size) size=$2; shift ;;
    --models) models=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "precision.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
for model in $models; do
  [[ $model == cosmoflow || $model == unet ]] ||
    { echo "precision.sh: --models takes cosmoflow and unet, not '$model'" >&2; exit 2; }
done
source perf/common.sh
peer_and_tessera precision.sh

# The ISA oneDNN dispatches to: `onednn isa: NAME (bf16 instructions: yes|no)`, or the older
# `onednn: ... ISA NAME)`; bf16 instructions where tessera says so, else where NAME has bf16 or
# amx, else (no NAME) where /proc/cpuinfo lists avx512_bf16 or amx_bf16.
info=$("$tessera" info --kokkos-disable-warnings 2>/dev/null) || info=""
isa=$(sed -n 's/^onednn isa: *\([^ ]*\).*/\1/p' <<<"$info" | head -n 1)
[[ -n $isa ]] || isa=$(sed -n 's/^onednn:.*ISA \([^ )]*\).*/\1/p' <<<"$info" | head -n 1)
isa=${isa:-unknown}
case "$(grep -o 'bf16 instructions: [a-z]*' <<<"$info" | head -n 1 || true)" in
  *yes) bf16_isa=1 ;;
  *no) bf16_isa=0 ;;
  *) if [[ $isa == *bf16* || $isa == *amx* ]] ||
       { [[ $isa == unknown ]] && grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; }; then
       bf16_isa=1
     else
       bf16_isa=0
     fi ;;
esac
echo "== oneDNN ISA: $isa"
if [[ $bf16_isa == 0 ]]; then
  echo "precision.sh: this CPU has no bf16 instructions for oneDNN (ISA $isa; needs AVX512-BF16 or AMX):"
  echo "  the bf16 targets do not apply here; what is measured is printed all the same."
fi

# tessera_run CONFIG BATCH PRECISION: trains CONFIG in PRECISION; sets rate (samples/s) and act
# (activation MiB), or, if tessera refuses (its message shown), leaves them n/a and sets refused.
tessera_run() {
  local metrics=$work/metrics-$3.jsonl flags=()
  [[ $3 == fp32 ]] || flags=(--precision "$3")
  rate=n/a act=n/a refused=0
  rm -f "$metrics"  # one log per run: the next model's must not follow this one's
  if ! "$tessera" train "$1" "${flags[@]}" --metrics "$metrics" --quiet --kokkos-threads="$threads" \
    --kokkos-disable-warnings >"$work/out" 2>"$work/err"; then
    if [[ $3 == fp32 ]]; then echo "precision.sh: tessera train failed:"; else
      echo "precision.sh: tessera refused to train in $3 (or failed); its figures are n/a:"; fi
    sed 's/^/  /' "$work/err"
    refused=1
    return 0
  fi
  cat "$work/err" >&2
  tail -n 1 "$work/out"
  rate=$(/usr/bin/python3 perf/cosmoflow_run.py rate "$metrics" "$2")
  act=$(/usr/bin/python3 -c '
import json, sys
end = [e for e in map(json.loads, open(sys.argv[1])) if "peak_rss_mb" in e][-1]
ran = end.get("precision", sys.argv[2])
if ran != sys.argv[2]:
    sys.exit(f"precision.sh: tessera trained in {ran}, not {sys.argv[2]}")
print(end.get("activation_mb", "n/a"))' "$metrics" "$3")
}

# peer_best PEER SIZE BATCH PRECISION: the PyTorch peer in both memory formats; sets best.
peer_best() {
  local fmt out
  best=0
  for fmt in default channels_last; do
    out=$("$peer_python" "perf/$1" "$2" "$3" "$steps" "$threads" "$fmt" "$4")
    echo "$out"
    best=$(/usr/bin/python3 -c "print(max($best, $(sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' <<<"$out")))")
  done
}

declare -A result
for model in $models; do
  if [[ $model == cosmoflow ]]; then
    name=cosmoflow-small batch=4 peer=torch_cosmoflow.py
    /usr/bin/python3 perf/cosmoflow_run.py config "$size" "$batch" "$((steps + 2))" "$work/run.json"
  else
    name=unet3d-small batch=2 peer=torch_unet3d.py
    /usr/bin/python3 perf/cosmoflow_run.py example_config examples/unet3d_small.json "$size" "$batch" \
      "$((steps + 2))" "$work/run.json"
  fi
  for precision in fp32 bf16; do
    echo "== tessera $precision: $name S=$size batch=$batch threads=$threads"
    tessera_run "$work/run.json" "$batch" "$precision"
    [[ $refused == 0 || $precision == bf16 ]] || exit 1
    result[$model.$precision]=$rate result[$model.$precision.act]=$act
  done
  for precision in fp32 bf16; do
    echo "== torch $precision peer: $name (best of default and channels_last memory format)"
    peer_best "$peer" "$size" "$batch" "$precision"
    result[$model.torch_$precision]=$best
  done
  /usr/bin/python3 - "$model" "${result[$model.fp32]}" "${result[$model.bf16]}" "${result[$model.fp32.act]}" \
    "${result[$model.bf16.act]}" "${result[$model.torch_fp32]}" "${result[$model.torch_bf16]}" <<'PY'
import sys
model, *figures = sys.argv[1:]
f32, b16, a32, a16, t32, t16 = (float(x) if x != "n/a" else None for x in figures)
fmt = lambda x, p=2: "n/a" if x is None else f"{x:.{p}f}"
speedup = b16 / f32 if b16 and f32 else None
print(f"model={model} fp32_samples_per_s={fmt(f32)} bf16_samples_per_s={fmt(b16)} speedup={fmt(speedup)} "
      f"fp32_activation_mb={fmt(a32, 1)} bf16_activation_mb={fmt(a16, 1)} torch_fp32={fmt(t32)} torch_bf16={fmt(t16)}")
PY
done

# The last line: cosmoflow-small's figures (and unet3d-small's speedup), n/a where not measured.
/usr/bin/python3 - "$isa" "$bf16_isa" "${result[cosmoflow.fp32]:-n/a}" "${result[cosmoflow.bf16]:-n/a}" \
  "${result[cosmoflow.fp32.act]:-n/a}" "${result[cosmoflow.bf16.act]:-n/a}" "${result[cosmoflow.torch_bf16]:-n/a}" \
  "${result[unet.fp32]:-n/a}" "${result[unet.bf16]:-n/a}" <<'PY'
import sys
isa, bf16_isa, *figures = sys.argv[1:]
f32, b16, a32, a16, t16, u32, u16 = (float(x) if x != "n/a" else None for x in figures)
ratio = lambda a, b: f"{a / b:.2f}" if a and b else "n/a"
speedup, memory, torch_ratio = ratio(b16, f32), ratio(a16, a32), ratio(b16, t16)
if bf16_isa == "1":
    checks = [("bf16_speedup >= 1.6", speedup, lambda x: x >= 1.6),
              ("bf16_activation_memory_ratio <= 0.6", memory, lambda x: x <= 0.6),
              ("torch_bf16_ratio > 1", torch_ratio, lambda x: x > 1)]
    print("targets (cosmoflow-small): " + ", ".join(
        f"{name}: {'not measured' if x == 'n/a' else 'met' if ok(float(x)) else 'missed'}" for name, x, ok in checks))
print(f"bf16_speedup={speedup} bf16_activation_memory_ratio={memory} torch_bf16_ratio={torch_ratio} "
      f"unet_bf16_speedup={ratio(u16, u32)} isa={isa}")
PY
