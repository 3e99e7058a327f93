#!/usr/bin/env bash
# Builds Tessera here and packs relocatable bundles for a machine that has none of this one's
# libraries (a lent GPU machine: see docs/gpu.md), with scripts/pack_bundle.py:
#   build/bundle/cpu/   the CPU build (oneDNN): tessera and what it loads;
#   build/bundle/cuda/  the CUDA build (cuDNN): tessera, the programs of its GPU tests (ctest
#                       label gpu, in cuda/tests/), and what they load but the CUDA libraries,
#                       which env.sh takes from the machine's own Python packages;
#   build/bundle/pack/tessera-bundle.tar.xz  both, and the layer reference the GPU tests
#                       compare with, in one file to carry (`tar xf` it anywhere).
# GPU code: SASS for Ampere (sm_80) and its PTX, which the driver compiles for newer GPUs
# (Hopper) at first use and keeps in CUDA_CACHE_PATH (env.sh): Kokkos 3.4.1 knows no Hopper.
# Prints each bundle's size and what travels with the working tree, which must stay under the
# device tool's 64 MiB.
# Usage: scripts/gpu_bundle.sh [--variant cpu|cuda|both] [--no-build] [--no-pack]
#   --no-build: pack the existing builds (build/default, or build/bundle-cpu where build/default's
#               host code is not generic; build/cuda)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
variant=both build=1 pack=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --variant) variant=$2; shift ;;
    --no-build) build=0 ;;
    --no-pack) pack=0 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_bundle.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $variant =~ ^(cpu|cuda|both)$ ]] || { echo "gpu_bundle.sh: --variant is cpu, cuda or both, not '$variant'" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "gpu_bundle.sh: patchelf is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }
out=$root/build/bundle
mkdir -p "$out/pack"
log() { printf '[gpu_bundle %(%H:%M:%S)T] %s\n' -1 "$*"; }

# The CPU build also writes the reference the GPU build's layers are checked against, and
# resumes the GPU build's checkpoints. The bundle runs on another machine's CPU, so its host
# code must be generic x86-64: build/default where it is configured so (TESSERA_HOST_ARCH's
# default), else the bundle-cpu preset's build/bundle-cpu.
cpu_preset=default
arch=$(sed -n 's/^TESSERA_HOST_ARCH:[A-Z]*=//p' build/default/CMakeCache.txt 2>/dev/null || true)
[[ -n $arch && $arch != generic ]] && cpu_preset=bundle-cpu
cpu_build=build/$cpu_preset
[[ $build == 1 ]] && { log "building the CPU build ($cpu_build)"; scripts/build.sh "$cpu_preset" >/dev/null; }
[[ -x $cpu_build/tessera ]] ||
  { echo "gpu_bundle.sh: $cpu_build has no tessera (build/default's host code is '$arch', not generic); run without --no-build" >&2; exit 1; }
"$cpu_build"/tests/tessera_layer_reference write "$out/layer_reference.bin" --kokkos-disable-warnings >/dev/null 2>&1
log "packing $cpu_build into build/bundle/cpu"
scripts/pack_bundle.py --build "$cpu_build" --out "$out/cpu"

if [[ $variant != cpu ]]; then
  if [[ $build == 1 ]]; then
    log "building the CUDA build (build/cuda)"
    cmake --preset cuda -DTESSERA_HOST_REFERENCE="$out/layer_reference.bin" \
      -DTESSERA_HOST_TESSERA="$root/$cpu_build/tessera" >/dev/null
    scripts/build.sh cuda >/dev/null
  fi
  log "packing build/cuda with its gpu tests into build/bundle/cuda"
  scripts/pack_bundle.py --build build/cuda --out "$out/cuda" --label gpu \
    --map "$root/$cpu_build/tessera=../cpu/bin/tessera" --map "$out/layer_reference.bin=layer_reference.bin"
  cp "$out/layer_reference.bin" "$out/cuda/"
  mkdir -p "$out/cuda/share/tessera/perf" "$out/cuda/share/tessera/examples/cosmoflow"
  cp perf/cosmoflow_gpu.sh perf/cosmoflow_run.py perf/torch_cosmoflow.py perf/torch_unet3d.py \
    perf/torch_cosmoflow_mlperf.py perf/torch_gpu.py perf/torch_layer_times.py perf/layer_table.py \
    "$out/cuda/share/tessera/perf/"
  cp examples/cosmoflow_small.json examples/cosmoflow_tiny.json examples/unet3d_small.json \
    "$out/cuda/share/tessera/examples/"
  cp examples/cosmoflow/cosmoflow_128.json "$out/cuda/share/tessera/examples/cosmoflow/"
fi

if [[ $pack == 1 ]]; then
  parts=(cpu)  # always: the GPU tests resume the CUDA build's checkpoints on the CPU build
  [[ $variant != cpu ]] && parts+=(cuda)
  log "compressing ${parts[*]} into build/bundle/pack/tessera-bundle.tar.xz"
  tar -C "$out" -cf - "${parts[@]}" | xz -T0 -6 >"$out/pack/tessera-bundle.tar.xz.partial"
  mv "$out/pack/tessera-bundle.tar.xz.partial" "$out/pack/tessera-bundle.tar.xz"
  tree_bytes=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s}')
  pack_bytes=$(stat -c %s "$out/pack/tessera-bundle.tar.xz")
  for p in "${parts[@]}"; do printf '%-5s %6.1f MiB unpacked\n' "$p" "$(du -sb "$out/$p" | awk '{print $1 / 1048576}')"; done
  awk -v t="$tree_bytes" -v p="$pack_bytes" 'BEGIN {
    printf "pack  %6.1f MiB (build/bundle/pack/tessera-bundle.tar.xz)\n", p / 1048576
    printf "travels with the working tree (%.1f MiB): %.1f MiB of 64\n", t / 1048576, (t + p) / 1048576
    exit (t + p > 64 * 1048576) }' ||
    { echo "gpu_bundle.sh: the bundle and the working tree exceed the 64 MiB a device call carries" >&2; exit 1; }
fi
