#pragma once
#include <cstdint>

#include "tessera/core/error.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/layers/parameter_shard.hpp"

namespace tessera::layers {

/// ParameterShard::whole_index in a form a kernel can call: the flat index in the whole
/// parameter of element i of this rank's part, with the part's extents, the whole's strides
/// and the indices held along the split dimensions (at most two) copied to the device once.
struct ShardIndex {
  static constexpr int kMaxRank = 6;
  int rank = 0;
  bool split = false;
  int64_t extent[kMaxRank] = {}, stride[kMaxRank] = {};
  int axis[2] = {-1, -1};
  int64_t offset = 0;  // the first element of a run of the block
  DeviceView<int64_t> along[2];

  explicit ShardIndex(const ParameterShard& s) : split(s.split()) {
    if (!split) return;
    rank = s.whole.rank();
    if (rank > kMaxRank || s.axes.size() > 2)
      throw Error("a parameter shard of " + s.whole.str() + " has too many dimensions");
    if (!s.run_first.empty()) offset = s.run_first[static_cast<size_t>(s.index)];
    const Shape local = s.member_block_shape(s.index, "parameter shard");
    int64_t st = 1;
    for (int d = rank - 1; d >= 0; --d) {
      extent[d] = local[d];
      stride[d] = st;
      st *= s.whole[d];
    }
    for (size_t a = 0; a < s.axes.size(); ++a) {
      const auto& held = s.held[static_cast<size_t>(s.index)][a];
      axis[a] = s.axes[a];
      along[a] = DeviceView<int64_t>("tessera::shard_index", held.size());
      auto host = Kokkos::create_mirror_view(along[a]);
      for (size_t k = 0; k < held.size(); ++k) host(k) = held[k];
      Kokkos::deep_copy(along[a], host);
    }
  }
  KOKKOS_INLINE_FUNCTION int64_t operator()(int64_t i) const {
    if (!split) return i;
    i += offset;
    int64_t at = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = i % extent[d];
      i /= extent[d];
      const int64_t w = d == axis[0] ? along[0](c) : d == axis[1] ? along[1](c) : c;
      at += w * stride[d];
    }
    return at;
  }
};

}  // namespace tessera::layers
