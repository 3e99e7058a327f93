#pragma once
#include <cstdint>

#include "tessera/core/even_split.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/layers/parameter_shard.hpp"

namespace tessera::layers {

/// ParameterShard::whole_index in a form a kernel can call and a loop can reuse: the flat
/// index in the whole parameter of element i of one shard, with the shard's strides worked
/// out once.
struct ShardIndex {
  int64_t inner = 1, extent = 1, local = 1, first = 0;
  bool split = false;

  explicit ShardIndex(const ParameterShard& s) : split(s.split()) {
    if (!split) return;
    for (int k = s.axis + 1; k < s.whole.rank(); ++k) inner *= s.whole[k];
    extent = s.whole[s.axis];
    local = even_part(extent, s.parts, s.index);
    first = even_boundary(extent, s.parts, s.index);
  }
  KOKKOS_INLINE_FUNCTION int64_t operator()(int64_t i) const {
    if (!split) return i;
    const int64_t outer = i / (local * inner), along = (i / inner) % local, within = i % inner;
    return (outer * extent + first + along) * inner + within;
  }
};

}  // namespace tessera::layers
