#!/usr/bin/env bash
# Usage: check_grid_split_resume.sh TESSERA GRID_CONFIG PLAIN_CONFIG WORKDIR MPIEXEC MPIFLAGS —
# trains 4 steps on 4 ranks with layers split 2-D ({"channel": 2, "filter": 2}) and a
# checkpoint, then resumes that checkpoint on one rank with the same model unsplit to step 6:
# the checkpoint holds whole parameters gathered from the 2-D shards.
set -euo pipefail
tessera=$1 grid=$2 plain=$3 work=$4 mpiexec=$5 flags=${6//;/ }
mkdir -p "$work"; rm -f "$work"/grid.*
# shellcheck disable=SC2086
"$mpiexec" -n 4 $flags "$tessera" train "$grid" --max-steps 4 --batch-size 8 --checkpoint "$work/grid.ckpt" \
  --no-progress --kokkos-disable-warnings | tee "$work/grid4.out"
grep -q '^done: 4 steps' "$work/grid4.out"
grep -q 'conv2 .*{channel 2, filter 2}' "$work/grid4.out"
"$tessera" train "$plain" --max-steps 6 --batch-size 8 --resume "$work/grid.ckpt" --no-progress \
  --kokkos-disable-warnings | tee "$work/grid1.out"
grep -q '^done: 6 steps' "$work/grid1.out"
