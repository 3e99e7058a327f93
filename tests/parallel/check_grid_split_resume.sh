#!/usr/bin/env bash
# Usage: check_grid_split_resume.sh TESSERA CONFIG RANKS LAYOUT RESUME_CONFIG RESUME_RANKS PLAIN_CONFIG
#                                   WORKDIR MPIEXEC MPIFLAGS —
# trains 4 steps of CONFIG (layers split 2-D or 3-D, whose run header shows LAYOUT, a regular
# expression) on RANKS ranks with a checkpoint, then resumes that checkpoint to step 6 twice:
# on one rank with the same model unsplit (PLAIN_CONFIG), and as RESUME_CONFIG on RESUME_RANKS
# ranks. The checkpoint holds whole parameters gathered from the shards, so both continue from
# the same weights: their validation losses agree (to 1%, far closer than weights put back in
# the wrong places would give).
set -euo pipefail
tessera=$1 config=$2 ranks=$3 layout=$4 resume=$5 resume_ranks=$6 plain=$7 work=$8 mpiexec=$9 flags=${10//;/ }
mkdir -p "$work"; rm -f "$work"/split.*
common=(--batch-size 8 --no-progress --kokkos-disable-warnings)
# shellcheck disable=SC2086
"$mpiexec" -n "$ranks" $flags "$tessera" train "$config" --max-steps 4 --checkpoint "$work/split.ckpt" "${common[@]}" |
  tee "$work/split.out"
grep -q '^done: 4 steps' "$work/split.out"
grep -Eq "$layout" "$work/split.out" || { echo "the run header does not show the layout /$layout/"; exit 1; }
"$tessera" train "$plain" --max-steps 6 --resume "$work/split.ckpt" "${common[@]}" | tee "$work/one.out"
# shellcheck disable=SC2086
"$mpiexec" -n "$resume_ranks" $flags "$tessera" train "$resume" --max-steps 6 --resume "$work/split.ckpt" \
  "${common[@]}" | tee "$work/resumed.out"
loss() { sed -n 's/^done: 6 steps.*validation loss \([0-9.e+-]*\).*/\1/p' "$1"; }
one=$(loss "$work/one.out") other=$(loss "$work/resumed.out")
[[ -n $one && -n $other ]] || { echo "a resumed run did not reach step 6 with a validation loss"; exit 1; }
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-2 * max(1.0, abs(a)))" \
  "$one" "$other" || { echo "resumed on 1 rank: validation loss $one; on $resume_ranks ranks: $other"; exit 1; }
echo "resumed from the shards: validation loss $one on 1 rank, $other on $resume_ranks ranks"
