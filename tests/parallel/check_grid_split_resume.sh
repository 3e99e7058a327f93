#!/usr/bin/env bash
# Usage: check_grid_split_resume.sh TESSERA GRID_CONFIG PLAIN_CONFIG WORKDIR MPIEXEC MPIFLAGS —
# trains 4 steps on 4 ranks with layers split 2-D ({"channel": 2, "filter": 2}) and a
# checkpoint, then resumes that checkpoint to step 6 twice: on one rank with the same model
# unsplit, and on the 4 ranks again. The checkpoint holds whole parameters gathered from the
# 2-D shards, so both continue from the same weights: their validation losses agree (to 1%,
# far closer than weights put back in the wrong places would give).
set -euo pipefail
tessera=$1 grid=$2 plain=$3 work=$4 mpiexec=$5 flags=${6//;/ }
mkdir -p "$work"; rm -f "$work"/grid.*
common=(--batch-size 8 --no-progress --kokkos-disable-warnings)
# shellcheck disable=SC2086
"$mpiexec" -n 4 $flags "$tessera" train "$grid" --max-steps 4 --checkpoint "$work/grid.ckpt" "${common[@]}" |
  tee "$work/grid4.out"
grep -q '^done: 4 steps' "$work/grid4.out"
grep -q 'conv2 .*{channel 2, filter 2}' "$work/grid4.out"
"$tessera" train "$plain" --max-steps 6 --resume "$work/grid.ckpt" "${common[@]}" | tee "$work/grid1.out"
# shellcheck disable=SC2086
"$mpiexec" -n 4 $flags "$tessera" train "$grid" --max-steps 6 --resume "$work/grid.ckpt" "${common[@]}" |
  tee "$work/grid4b.out"
loss() { sed -n 's/^done: 6 steps.*validation loss \([0-9.e+-]*\).*/\1/p' "$1"; }
one=$(loss "$work/grid1.out") four=$(loss "$work/grid4b.out")
[[ -n $one && -n $four ]] || { echo "a resumed run did not reach step 6 with a validation loss"; exit 1; }
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-2 * max(1.0, abs(a)))" \
  "$one" "$four" || { echo "resumed on 1 rank: validation loss $one; on 4 ranks: $four"; exit 1; }
echo "resumed from 2-D shards: validation loss $one on 1 rank, $four on 4 ranks"
