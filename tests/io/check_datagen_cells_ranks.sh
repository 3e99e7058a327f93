#!/usr/bin/env bash
# Usage: check_datagen_cells_ranks.sh TESSERA WORKDIR MPIEXEC MPIFLAGS — `tessera datagen cells`
# under mpirun, each rank writing its share of the files, writes the same data set as one rank:
# the same files holding the same values (h5diff compares the data, not the files' timestamps)
# and the same sample lists, in both layouts.
set -euo pipefail
tessera=$1 work=$2 mpiexec=$3 flags=${4//;/ }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
for layout in sample-per-file samples-per-file; do
  common=(--size 12 --cell-size 6 --membrane 1.2 --samples 7 --validation-samples 3 --samples-per-file 2
          --seed 11 --layout "$layout" --quiet --kokkos-disable-warnings)
  "$tessera" datagen cells --output "one_$layout" "${common[@]}" >/dev/null
  # shellcheck disable=SC2086
  "$mpiexec" -n 3 $flags "$tessera" datagen cells --output "three_$layout" "${common[@]}" >/dev/null
  one=$(cd "one_$layout" && find . -name '*.h5' | sort)
  three=$(cd "three_$layout" && find . -name '*.h5' | sort)
  [[ "$one" == "$three" ]] || { echo "$layout: different files:"; echo "$one"; echo "--"; echo "$three"; exit 1; }
  [[ $(wc -l <<<"$one") -eq $([[ $layout == sample-per-file ]] && echo 10 || echo 6) ]] || {
    echo "$layout: unexpected files: $one"; exit 1; }
  for file in $one; do
    h5diff "one_$layout/$file" "three_$layout/$file" || { echo "$layout: $file differs"; exit 1; }
  done
  for list in train.txt validation.txt; do
    if [[ -e "one_$layout/$list" || -e "three_$layout/$list" ]]; then
      cmp "one_$layout/$list" "three_$layout/$list"
    fi
  done
  test -z "$(find . -name '*.tmp.*')"  # nothing half-written left behind
done
echo "datagen cells: 3 ranks wrote the same files and lists as 1 rank, in both layouts"
