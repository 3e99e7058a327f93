#!/usr/bin/env bash
# Usage: check_ffn_ranks.sh PROGRAM TESSERA WORKDIR MPIEXEC "MPI FLAGS" RANKS... — writes a small
# cells data set with `tessera datagen cells`, then runs the FFN equivalence program (a
# flood-filling network trained data-parallel against one rank) at each rank count.
set -euo pipefail
program=$1 tessera=$2 work=$3 mpiexec=$4 flags=$5
shift 5
rm -rf "$work"; mkdir -p "$work"
"$tessera" datagen cells --output "$work/cells" --size 16 --cell-size 8 --membrane 1.2 --samples 4 \
  --validation-samples 1 --no-progress --kokkos-disable-warnings > "$work/datagen.out"
for ranks in "$@"; do
  # shellcheck disable=SC2086 # the MPI flags are words
  "$mpiexec" -np "$ranks" $flags "$program" "$work/cells"
done
