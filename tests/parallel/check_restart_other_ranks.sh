#!/usr/bin/env bash
# Usage: check_restart_other_ranks.sh TESSERA CONFIG WORKDIR MPIEXEC MPIFLAGS — trains 8 steps on
# 2 ranks with a checkpoint, resumes it on 4 ranks to step 16, and checks both finished.
set -euo pipefail
tessera=$1 config=$2 work=$3 mpiexec=$4 flags=${5//;/ }
mkdir -p "$work"; rm -f "$work"/run.*
# shellcheck disable=SC2086
"$mpiexec" -n 2 $flags "$tessera" train "$config" --max-steps 8 --checkpoint "$work/run.ckpt" --quiet \
  --kokkos-disable-warnings | tee "$work/run2.out"
grep -q '^done: 8 steps' "$work/run2.out"
# shellcheck disable=SC2086
"$mpiexec" -n 4 $flags "$tessera" train "$config" --max-steps 16 --resume "$work/run.ckpt" --quiet \
  --kokkos-disable-warnings | tee "$work/run4.out"
grep -q '^done: 16 steps' "$work/run4.out"
test "$(grep -c '^done:' "$work/run4.out")" -eq 1  # rank 0 alone reports
