#pragma once
// A segment of host_sgemm's gathered product, apart from host_sgemm.hpp: the per-instruction-set
// kernels include it and nothing of the standard library beyond <cstdint> (host_sgemm_block.hpp
// says why).
#include <cstdint>

namespace tessera::kokkos_backend::host_sgemm {

/// A run of the product's inner index: A read at rows[i] + a_offset + t and B's row b_row + t,
/// for t < length.
struct Segment {
  int64_t a_offset = 0, b_row = 0, length = 0;
};

}  // namespace tessera::kokkos_backend::host_sgemm
