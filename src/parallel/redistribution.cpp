#include "tessera/parallel/redistribution.hpp"

#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"
#include "tessera/parallel/traffic_counter.hpp"
#include "tessera/parallel/wait_clock.hpp"

namespace tessera::parallel {
namespace {

int64_t volume_of(const Index5& e) { return e[0] * e[1] * e[2] * e[3] * e[4]; }

/// Where a block lies in the global activation viewed as [N, D, H, W, C].
struct Block {
  Index5 offset{}, extent{};
};

/// The block of every rank of the grid, indexed by its rank in grid.all().
std::vector<Block> blocks_of(const ProcessGrid& grid, const Shape& global, const std::string& where) {
  grid.local_shape(global, where);  // refuses what does not split, alike on every rank
  const Index5 whole = extents5_of(global);
  const Distribution& d = grid.distribution();
  std::vector<Block> blocks(static_cast<size_t>(d.ranks()));
  // Sample groups may hold different numbers of samples (SampleShares), channel ranges differ
  // by one where the group does not divide the channels, and spatial boxes as the grid's
  // SpatialAlignment cuts them. Features ([N, C]) have no space to split.
  const int64_t channels = global[global.rank() - 1];
  const bool spatial = global.rank() > 2;
  for (int s = 0; s < d.sample; ++s)
    for (int c = 0; c < d.channel_parts(); ++c)
      for (int i = 0; i < d.depth; ++i)
        for (int j = 0; j < d.height; ++j)
          for (int k = 0; k < d.width; ++k) {
            const Box box = spatial ? grid.box_at({i, j, k}, {whole[1], whole[2], whole[3]}, where)
                                    : Box::whole({whole[1], whole[2], whole[3]});
            blocks[static_cast<size_t>(grid.rank_of(s, {i, j, k}, c))] = {
                {grid.group_first_sample(global[0], s), box.offset[0], box.offset[1], box.offset[2],
                 even_boundary(channels, d.channel_parts(), c)},
                {grid.group_batch(global[0], s), box.extent[0], box.extent[1], box.extent[2],
                 grid.channel_count(channels, c, where)}};
          }
  return blocks;
}

Block intersection(const Block& a, const Block& b) {
  Block c;
  for (size_t k = 0; k < 5; ++k) {
    c.offset[k] = std::max(a.offset[k], b.offset[k]);
    c.extent[k] = std::max<int64_t>(0, std::min(a.offset[k] + a.extent[k], b.offset[k] + b.extent[k]) - c.offset[k]);
  }
  return c;
}

Index5 relative(const Index5& global_offset, const Block& block) {
  Index5 r{};
  for (size_t k = 0; k < 5; ++k) r[k] = global_offset[k] - block.offset[k];
  return r;
}

}  // namespace

Redistribution::Redistribution(const ProcessGrid& from, const ProcessGrid& to, const Shape& global,
                               const std::string& where, ElementType type)
    : group_(from.all()), global_(global), where_(where), type_(type) {
  if (from.all().size() != to.all().size() || from.all().rank() != to.all().rank())
    throw ConfigError(where, "cannot redistribute from " + from.distribution().str() + " over " +
                                 std::to_string(from.all().size()) + " ranks to " + to.distribution().str() + " over " +
                                 std::to_string(to.all().size()) + " ranks: both must span the same ranks");
  require_shape(
      global.rank() == 2 || global.rank() == 4 || global.rank() == 5,
      where + ": redistribution needs an activation [N, C], [N, H, W, C] or [N, D, H, W, C], not " + global.str());
  // Features are copies on every rank of a spatial group, each carrying a share of their
  // gradient: moving them is not a permutation of blocks.
  require_shape(global.rank() != 2 || (!from.distribution().is_spatial() && !to.distribution().is_spatial()),
                where + ": features " + global.str() +
                    " can be redistributed only between sample and channel splits, not " + from.distribution().str() +
                    " to " + to.distribution().str());
  from_shape_ = from.local_shape(global, where);
  to_shape_ = to.local_shape(global, where);
  const auto from_blocks = blocks_of(from, global, where), to_blocks = blocks_of(to, global, where);
  const auto me = static_cast<size_t>(group_.rank());
  const Block self = intersection(from_blocks[me], to_blocks[me]);
  self_from_offset_ = relative(self.offset, from_blocks[me]);
  self_to_offset_ = relative(self.offset, to_blocks[me]);
  self_extent_ = self.extent;

  // Equal distributions give every rank the same block under both: nothing to send. Every rank
  // decides alike, so all of them skip the collective together.
  exchange_ = !group_.is_serial() && !from.distribution().same_layout(to.distribution());
  const auto plan = [&](Side& side, const Block& mine, const std::vector<Block>& others) {
    side.counts.assign(others.size(), 0);
    side.displacements.assign(others.size(), 0);
    int64_t total = 0;
    for (size_t q = 0; q < others.size(); ++q) {
      side.displacements[q] = static_cast<int>(total);
      if (q == me || !exchange_) continue;
      const Block piece = intersection(mine, others[q]);
      const int64_t count = words_for(volume_of(piece.extent), type);
      if (count == 0) continue;
      if (total + count > std::numeric_limits<int>::max())
        throw ShapeError(where + ": redistributing " + global.str() + " from " + from.distribution().str() + " to " +
                         to.distribution().str() + " needs more than 2^31 words of messages on one rank");
      side.pieces.push_back({relative(piece.offset, mine), piece.extent, total});
      side.counts[q] = static_cast<int>(count);
      total += count;
    }
    side.buffer = DeviceView<float>("tessera::redistribution_buffer", static_cast<size_t>(total));
    if constexpr (!kHostAccessible) side.host = Kokkos::create_mirror_view(side.buffer);
  };
  plan(from_side_, from_blocks[me], to_blocks);
  plan(to_side_, to_blocks[me], from_blocks);
}

void Redistribution::require_shape_of(const Tensor& t, const Shape& expected, const char* what) const {
  require_shape(t.shape() == expected, where_ + ": redistribution got a " + what + " of shape " + t.shape().str() +
                                           ", expected " + expected.str() + " (global " + global_.str() + ")");
  require_shape(t.type() == type_, where_ + ": redistribution of " + element_type_name(type_) + " values got a " +
                                       what + " of " + element_type_name(t.type()));
}

void Redistribution::forward(const Tensor& from_local, const Tensor& to_local) {
  require_shape_of(from_local, from_shape_, "source block");
  require_shape_of(to_local, to_shape_, "destination block");
  move(from_local, from_side_, self_from_offset_, to_local, to_side_, self_to_offset_);
}

void Redistribution::backward(const Tensor& grad_to_local, const Tensor& grad_from_local) {
  require_shape_of(grad_to_local, to_shape_, "destination gradient");
  require_shape_of(grad_from_local, from_shape_, "source gradient");
  move(grad_to_local, to_side_, self_to_offset_, grad_from_local, from_side_, self_from_offset_);
}

void Redistribution::move(const Tensor& src, Side& src_side, const Index5& self_src_offset, const Tensor& dst,
                          Side& dst_side, const Index5& self_dst_offset) {
  const Array5 in = Array5::of(src), out = Array5::of(dst);
  const Index5 origin{0, 0, 0, 0, 0};
  for (const auto& p : src_side.pieces)
    copy_sub_box("tessera::redistribution_pack", in, p.offset,
                 Array5::in_buffer(src_side.buffer, p.buffer_offset, p.extent, type_), origin, p.extent);
  if (exchange_) {
    Kokkos::fence();
    double sent = 0;
    for (const auto& p : src_side.pieces) sent += static_cast<double>(volume_of(p.extent));
    TrafficCounter::add(TrafficCounter::redistribution, static_cast<double>(element_size(type_)) * sent);
    float* send = src_side.buffer.data();
    float* receive = dst_side.buffer.data();
    if constexpr (!kHostAccessible) {
      Kokkos::deep_copy(src_side.host, src_side.buffer);
      send = src_side.host.data();
      receive = dst_side.host.data();
    }
    {
      const WaitClock::Scope waiting;
      check_mpi(MPI_Alltoallv(send, src_side.counts.data(), src_side.displacements.data(), MPI_FLOAT, receive,
                              dst_side.counts.data(), dst_side.displacements.data(), MPI_FLOAT, group_.handle()),
                "MPI_Alltoallv");
    }
    if constexpr (!kHostAccessible) Kokkos::deep_copy(dst_side.buffer, dst_side.host);
  }
  copy_sub_box("tessera::redistribution_local", in, self_src_offset, out, self_dst_offset, self_extent_);
  for (const auto& p : dst_side.pieces)
    copy_sub_box("tessera::redistribution_unpack", Array5::in_buffer(dst_side.buffer, p.buffer_offset, p.extent, type_),
                 origin, out, p.offset, p.extent);
}

}  // namespace tessera::parallel
