#!/usr/bin/env bash
# Shows that a bundle made by scripts/gpu_bundle.sh needs nothing from the machine that built
# it: in a private mount namespace, empty folders hide the dependency prefix, the build trees,
# Open MPI's and PMIx's plugin folders, and /dev/null hides every system copy of a library the
# bundle carries (and mpirun, orted), so a program that still reached for one would fail to
# load it. The CUDA libraries stay: a GPU machine brings its own (env.sh), as this one's
# toolkit does here. Then, with only the bundle's env.sh:
#   cpu bundle:  tessera info, a short training run of the tiny example, and the same on 2
#                ranks through the bundle's mpirun (a depth split);
#   cuda bundle: tessera info exits non-zero with its "no GPU" message (on a machine without
#                one; on a GPU machine it reports the device).
# Usage: scripts/check_bundle.sh BUNDLE_DIR     (as root: it mounts)
set -euo pipefail
bundle=$(cd "${1:?usage: check_bundle.sh BUNDLE_DIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $bundle/env.sh ]] || { echo "check_bundle.sh: $bundle has no env.sh: not a bundle" >&2; exit 2; }
if [[ ${TESSERA_IN_NAMESPACE:-} != 1 ]]; then
  [[ $(id -u) -eq 0 ]] || { echo "check_bundle.sh: needs root to make a mount namespace" >&2; exit 2; }
  exec env TESSERA_IN_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
fi

empty=$(mktemp -d)
hidden=0
hide_dir() { [[ -d $1 ]] && mount --bind "$empty" "$1" && hidden=$((hidden + 1)) || true; }
hide_file() { [[ -e $1 ]] && mount --bind /dev/null "$(readlink -f "$1")" && hidden=$((hidden + 1)) || true; }
for d in /opt/tessera-deps /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi \
         "$root"/build/default "$root"/build/bundle-cpu "$root"/build/cuda; do
  hide_dir "$d"
done
for lib in "$bundle"/lib/*.so*; do
  name=$(basename "$lib")
  for sys in /usr/lib/x86_64-linux-gnu/"$name" /usr/lib/x86_64-linux-gnu/openblas-pthread/"$name"; do hide_file "$sys"; done
done
for prog in orterun orted mpirun mpiexec tessera; do hide_file "/usr/bin/$prog"; done
echo "== hidden: $hidden folders and files of the build machine"

# shellcheck disable=SC1091
. "$bundle/env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$empty"' EXIT
if [[ $(cat "$bundle/VARIANT") == cuda ]]; then
  echo "== cuda bundle: tessera info"
  set +e
  tessera info --kokkos-disable-warnings >"$work/info.out" 2>&1
  status=$?
  set -e
  cat "$work/info.out"
  if nvidia-smi -L >/dev/null 2>&1; then
    [[ $status -eq 0 ]] || { echo "check_bundle.sh: tessera info failed on a GPU machine" >&2; exit 1; }
  else
    [[ $status -ne 0 ]] && grep -q "could not start its Cuda execution space" "$work/info.out" ||
      { echo "check_bundle.sh: expected the clear no-GPU error from the CUDA tessera" >&2; exit 1; }
    echo "== ok: the CUDA bundle loads everything it needs and says there is no GPU"
  fi
  exit 0
fi
echo "== cpu bundle: tessera info"
tessera info --kokkos-disable-warnings | grep -E "^(tessera|kokkos:|op backends:)"
echo "== cpu bundle: 12 steps of the tiny example"
tessera train "$root/examples/cosmoflow_tiny.json" --max-steps 12 --epochs 1 --no-progress --kokkos-threads=2 |
  tee "$work/train.out" | tail -n 2
grep -q '^done: 12 steps' "$work/train.out"
echo "== cpu bundle: the same on 2 ranks split over depth, through the bundle's mpirun"
python3 - "$root/examples/cosmoflow_tiny.json" "$work/depth2.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["model"]["distribution"] = {"depth": 2}
json.dump(cfg, open(sys.argv[2], "w"))
PY
mpirun -np 2 --oversubscribe --bind-to none tessera train "$work/depth2.json" --max-steps 4 --epochs 1 --no-progress \
  --kokkos-threads=1 | tee "$work/mpi.out" | tail -n 1
grep -q '^done: 4 steps' "$work/mpi.out"
echo "== ok: the CPU bundle trains alone and on 2 ranks with none of the build machine's libraries"
