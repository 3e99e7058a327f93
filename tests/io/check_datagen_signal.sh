#!/usr/bin/env bash
# Usage: check_datagen_signal.sh TESSERA WORKDIR — SIGTERM while datagen writes a file: it exits
# at once with 143, removing the temporary file, and leaves no file under a final name
# half-written (the file being written never reaches its name, the lists are not written).
set -euo pipefail
tessera=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
# One large file, so the signal finds it being written.
"$tessera" datagen cosmoflow --output "$work/data" --samples 256 --validation-samples 0 --size 64 \
  --layout samples-per-file --samples-per-file 256 --no-progress --kokkos-disable-warnings >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  ls "$work/data" 2>/dev/null | grep -q '\.tmp\.' && break
  kill -0 "$pid" 2>/dev/null || { echo "datagen ended before it wrote"; cat "$work/out"; exit 1; }
  sleep 0.05
done
kill -TERM "$pid"
status=0; wait "$pid" || status=$?
cat "$work/out"
[[ $status -eq 143 ]] || { echo "expected exit status 143 (128 + SIGTERM), got $status"; exit 1; }
grep -q 'SIGTERM: stopping at once (temporary files removed)' "$work/out"
left=$(ls -A "$work/data")
[[ -z $left ]] || { echo "left in the output folder: $left"; exit 1; }
echo "datagen stopped by SIGTERM: exit $status, nothing left half-written"
