#!/usr/bin/env bash
# Builds one libFuzzer target of fuzz/ with clang (AddressSanitizer + UndefinedBehaviorSanitizer,
# Tessera's libraries instrumented, its dependencies not) in build/fuzz, and fuzzes it for
# SECONDS. Inputs that reach new code are kept in build/fuzz/corpus-TARGET; the seed corpus
# fuzz/corpus/TARGET is read, never written. A crash is saved as build/fuzz/crashes-TARGET/crash-*
# (fix it, then add the file to fuzz/corpus/TARGET: the replay tests run it from then on).
# Usage: scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]   (e.g. -max_len=4096)
#        scripts/fuzz.sh --list
# Needs clang with libFuzzer (Debian: clang, libclang-rt-dev for clang >= 15) and the
# dependencies of scripts/install_deps.sh. Exits non-zero when the fuzzer found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(config checkpoint sample_list hdf5_sample cli metrics_log)

if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
if [[ $# -lt 2 || ! " ${targets[*]} " =~ " ${1} " || ! $2 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]; targets: ${targets[*]}" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2

build=build/fuzz
source scripts/ccache_env.sh
cxx=${TESSERA_FUZZ_CXX:-clang++}
cc=${TESSERA_FUZZ_CC:-clang}
prefix=${TESSERA_FUZZ_PREFIX:-/opt/tessera-deps/openmp}
# fuzzer-no-link: coverage for libFuzzer in every Tessera object; the executables add the
# fuzzer itself. UBSan findings abort, so the fuzzer reports them as crashes.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  "-DCMAKE_CXX_FLAGS=$flags" -DTESSERA_ENABLE_FUZZERS=ON -DTESSERA_ENABLE_TESTS=OFF -DTESSERA_ENABLE_HDF5=ON \
  -DTESSERA_ENABLE_ONEDNN=OFF >/dev/null
cmake --build "$build" --target "tessera_fuzz_$target" -j "${TESSERA_BUILD_JOBS:-$(nproc)}"

work=$build/corpus-$target
crashes=$build/crashes-$target
mkdir -p "$work" "$crashes"
# The targets write their input to files in a scratch folder under TMPDIR, removed by a
# destructor that libFuzzer's exit skips; keep those folders here and remove them after.
scratch=$PWD/$build/tmp-$target
rm -rf "$scratch"
mkdir -p "$scratch"
dict=()
[[ -f fuzz/dict/$target.dict ]] && dict=("-dict=fuzz/dict/$target.dict")
before=$(find "$crashes" -type f | wc -l)
log=$build/fuzz-$target.log
# One OpenMP thread: Kokkos runs on libgomp, clang-compiled code on clang's runtime.
# -malloc_limit_mb: one allocation this large is a finding (sizes read from input must be
# checked before allocating), not something to survive.
set +e
TMPDIR=$scratch OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive \
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0} \
  "$build/fuzz/tessera_fuzz_$target" "$work" "fuzz/corpus/$target" "${dict[@]}" -max_total_time="$seconds" \
  -artifact_prefix="$crashes/" -rss_limit_mb=4096 -malloc_limit_mb=128 -timeout=30 -print_final_stats=1 "$@" \
  2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
rm -rf "$scratch"

executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
corpus=$(find "$work" -type f | wc -l)
found=$(find "$crashes" -type f | wc -l)
echo "fuzz $target: $executions executions in ${seconds} s; corpus $corpus inputs in $work" \
  "(seeds: fuzz/corpus/$target)"
if [[ $status -ne 0 || $found -gt $before ]]; then
  echo "fuzz $target: CRASH found (exit $status); reproducers in $crashes/:"
  find "$crashes" -type f -printf '  %p\n'
  exit 1
fi
echo "fuzz $target: no crash"
