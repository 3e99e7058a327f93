#!/usr/bin/env bash
# What driving training from Python costs: the quick start's network (examples/cosmoflow_tiny.json,
# in-memory synthetic fields, so both read the same data the same way) trained by
# `tessera train CONFIG` and by `tessera.train(CONFIG)` in Python, with and without a Python
# callback after every step, alternating, --runs times each, in one build.
# Usage: perf/python_overhead.sh [--runs N] [--epochs N] [--threads N] [--build DIR]
# Per run: the trainer's own samples/s (training steps only, no start-up) and the process's
# wall seconds. Last line:
#   python_step_ratio=R callback_step_ratio=C python_wall_ratio=W command_samples_per_s=S
#   python_best_ratio=RB callback_best_ratio=CB
#   (R, C: the median over the runs of Python's samples/s over the command's in the same run
#    (paired, so that the machine's drift between runs cancels), without and with the per-step
#    callback; 1.0 means no overhead, the target is >= 0.98; W: the same for wall time, start-up
#    and import included; RB, CB: the best run of each over the command's best.)
set -euo pipefail
cd "$(dirname "$0")/.."
source perf/common.sh
runs=5 epochs=6 threads=2 build=build/perf
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --epochs) epochs=$2; shift ;;
    --threads) threads=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "python_overhead.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
python=${TESSERA_PYTHON:-/usr/bin/python3}
build_perf "$build" tessera_cli tessera_python
[[ -f $build/python/tessera/__init__.py ]] ||
  { echo "python_overhead.sh: the Python module was not built (needs python3-dev and pybind11-dev)" >&2; exit 1; }
export OMP_NUM_THREADS=$threads PYTHONPATH=$PWD/$build/python
config=examples/cosmoflow_tiny.json
python_run() {  # $1: "callback" to add a per-step callback
  "$python" - "$config" "$epochs" "$1" <<'PY'
import sys
import tessera
config, epochs, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = []
callback = (lambda metrics: seen.append(metrics["loss"])) if mode == "callback" else None
result = tessera.train(config, epochs=epochs, progress=False, on_step=callback)
print(f"samples_per_s={result.samples_per_second:.1f}")
PY
}
seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}'; }
declare -a command_rates python_rates callback_rates command_walls python_walls
for ((i = 1; i <= runs; ++i)); do
  start=$(date +%s.%N)
  rate=$("$build/tessera" train "$config" --epochs "$epochs" --quiet --kokkos-disable-warnings 2>&1 |
         sed -n 's/.* steps, \([0-9.]*\) samples\/s.*/\1/p' | tail -1)
  command_walls+=("$(seconds_since "$start")")
  command_rates+=("$rate")
  start=$(date +%s.%N)
  python_rates+=("$(python_run plain 2>/dev/null | sed -n 's/samples_per_s=//p')")
  python_walls+=("$(seconds_since "$start")")
  callback_rates+=("$(python_run callback 2>/dev/null | sed -n 's/samples_per_s=//p')")
  echo "run $i: command ${command_rates[-1]} samples/s (${command_walls[-1]} s), python ${python_rates[-1]} samples/s" \
       "(${python_walls[-1]} s), python with a per-step callback ${callback_rates[-1]} samples/s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratios() {  # ratios NUMERATORS... -- DENOMINATORS...: per run
  local -a num=() den=()
  while [[ $1 != -- ]]; do num+=("$1"); shift; done
  shift
  den=("$@")
  for ((k = 0; k < ${#num[@]}; ++k)); do awk -v a="${num[k]}" -v b="${den[k]}" 'BEGIN {printf "%.4f\n", a / b}'; done
}
p=$(median $(ratios "${python_rates[@]}" -- "${command_rates[@]}"))
b=$(median $(ratios "${callback_rates[@]}" -- "${command_rates[@]}"))
w=$(median $(ratios "${python_walls[@]}" -- "${command_walls[@]}"))
c=$(median "${command_rates[@]}")
best() { printf '%s\n' "$@" | sort -g | tail -1; }
cb=$(best "${command_rates[@]}") pb=$(best "${python_rates[@]}") bb=$(best "${callback_rates[@]}")
awk -v c="$c" -v p="$p" -v b="$b" -v w="$w" -v cb="$cb" -v pb="$pb" -v bb="$bb" 'BEGIN {
  printf "python_step_ratio=%.3f callback_step_ratio=%.3f python_wall_ratio=%.3f command_samples_per_s=%.1f ", p, b, w, c
  printf "python_best_ratio=%.3f callback_best_ratio=%.3f\n", pb / cb, bb / cb }'
