#!/usr/bin/env bash
# Makes a copy of the Kokkos 3.4.1 source build with CUDA 13 (used by install_deps.sh --cuda):
#  * nvcc_wrapper defaults to -arch=sm_35, which CUDA 13 rejects; default to sm_80 (Ampere),
#    whose PTX also runs on Hopper. Kokkos passes its own -arch once configured.
#  * cudaMemPrefetchAsync takes a cudaMemLocation and flags since CUDA 13.
#  * half_t -> __half conversions must be explicit, and __half2double is gone (CUDA 13).
#  * Kokkos::Cuda::initialize aborts when the device's major compute capability differs from
#    the one built for, although the PTX every build embeds runs on any newer device (the
#    driver compiles it at load): an Ampere (sm_80) build is refused on Hopper (sm_90). Only a
#    build for a newer device than the one present is refused now; an older one warns.
# Usage: patch_kokkos_cuda13.sh KOKKOS_SOURCE_DIR   (idempotent)
set -euo pipefail
src=${1:?usage: patch_kokkos_cuda13.sh KOKKOS_SOURCE_DIR}

sed -i 's/^default_arch="sm_35"/default_arch="sm_80"/' "$src/bin/nvcc_wrapper"

space=$src/core/src/Cuda/Kokkos_CudaSpace.cpp
if ! grep -q 'cudaMemLocation' "$space"; then
  # The 3.4.1 call is cudaMemPrefetchAsync(ptr, bytes, device, stream).
  perl -0pi -e 's/cudaMemPrefetchAsync\(ptr, bytes, space\.cuda_device\(\),\s*space\.cuda_stream\(\)\)/cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation{cudaMemLocationTypeDevice, space.cuda_device()}, 0, space.cuda_stream())/' "$space"
  grep -q 'cudaMemLocation' "$space" || { echo "patch_kokkos_cuda13.sh: prefetch call not found in $space" >&2; exit 1; }
fi

half=$src/core/src/Cuda/Kokkos_Cuda_Half.hpp
# half_t converts to __half only explicitly, and CUDA 13's intrinsics no longer take it
# implicitly; __half2double no longer exists.
sed -i -E 's/return __half2double\(val\);/return static_cast<double>(__half2float(static_cast<__half>(val)));/;
           s/return (__half2[a-z_]+)\(val\);/return \1(static_cast<__half>(val));/' "$half"

instance=$src/core/src/Cuda/Kokkos_Cuda_Instance.cpp
old='if (compiled_major != cudaProp.major || compiled_minor > cudaProp.minor) {'
new='if (compiled_major > cudaProp.major || (compiled_major == cudaProp.major \&\& compiled_minor > cudaProp.minor)) {'
if grep -qF "$old" "$instance"; then
  sed -i "s/if (compiled_major != cudaProp.major || compiled_minor > cudaProp.minor) {/$new/" "$instance"
fi
grep -qF 'compiled_major > cudaProp.major' "$instance" ||
  { echo "patch_kokkos_cuda13.sh: architecture check not found in $instance" >&2; exit 1; }
