#include "tessera/parallel/weight_shard_exchange.hpp"

#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/even_split.hpp"
#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

DeviceView<float> part_of(const DeviceView<float>& v, int64_t first, int64_t count) {
  return Kokkos::subview(v, std::make_pair(static_cast<size_t>(first), static_cast<size_t>(first + count)));
}

}  // namespace

WeightShardExchange::WeightShardExchange(const Communicator& replicas, const Shape& block, const std::string& where)
    : collectives_(std::make_shared<MpiCollectives>(replicas)), block_(block), where_(where) {
  const int parts = replicas.size();
  const int64_t elements = block.numel();
  if (elements < parts)
    throw ShapeError(where + ": its weight block " + block.str() + " has fewer elements than the " +
                     std::to_string(parts) + " ranks it is sharded over (\"weights\": \"sharded\")");
  if (elements > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a weight block " + block.str() + " has more than 2^31 elements");
  shard_ = Shape{run_count(replicas.rank())};
  for (int r = 0; r < parts; ++r) room_ = std::max(room_, run_count(r));
  direct_ = elements % parts == 0 && kHostAccessible;
  if (direct_ || parts == 1) return;
  // Views start zero, and the rooms' tails past a run stay zero: runs are copied only into
  // their own elements, and the gather receives the other replicas' zero tails. So no call
  // clears them.
  buffer_ = DeviceView<float>("tessera::weight_shard_runs", static_cast<size_t>(parts * room_));
  send_ = DeviceView<float>("tessera::weight_shard_send", static_cast<size_t>(room_));
  sums_ = DeviceView<float>("tessera::weight_shard_sums", static_cast<size_t>(room_));
  if constexpr (!kHostAccessible) {
    host_ = Kokkos::create_mirror_view(buffer_);
    host_send_ = Kokkos::create_mirror_view(send_);
    host_sums_ = Kokkos::create_mirror_view(sums_);
  }
}

int64_t WeightShardExchange::run_first(int r) const { return even_boundary(block_.numel(), parts(), r); }
int64_t WeightShardExchange::run_count(int r) const { return even_part(block_.numel(), parts(), r); }

void WeightShardExchange::require(const Tensor& t, const Shape& expected, const char* what) const {
  require_shape(t.shape() == expected && t.type() == ElementType::fp32,
                where_ + ": weight shard exchange got a " + what + " " + t.shape().str() + " of " +
                    element_type_name(t.type()) + ", expected fp32 " + expected.str());
}

void WeightShardExchange::gather(const Tensor& shard, const Tensor& block) {
  require(shard, shard_, "shard");
  require(block, block_, "block");
  const int parts = this->parts();
  if (parts == 1) {
    deep_copy(block, shard.reshaped(block_));
    return;
  }
  TrafficCounter::add(TrafficCounter::weights, 4.0 * static_cast<double>(room_) * (parts - 1));
  Kokkos::fence();  // the optimizer's kernels wrote the shard
  if (direct_) {
    collectives_->allgather(shard.data(), block.data(), room_);
    return;
  }
  Kokkos::deep_copy(part_of(send_, 0, shard.numel()), shard.view());
  if constexpr (kHostAccessible) {
    collectives_->allgather(send_.data(), buffer_.data(), room_);
  } else {
    Kokkos::deep_copy(host_send_, send_);
    collectives_->allgather(host_send_.data(), host_.data(), room_);
    Kokkos::deep_copy(buffer_, host_);
  }
  for (int r = 0; r < parts; ++r)
    Kokkos::deep_copy(part_of(block.view(), run_first(r), run_count(r)), part_of(buffer_, r * room_, run_count(r)));
  Kokkos::fence();
}

void WeightShardExchange::reduce_scatter(const Tensor& block, const Tensor& shard) {
  require(block, block_, "block");
  require(shard, shard_, "shard");
  const int parts = this->parts();
  if (parts == 1) {
    deep_copy(shard, block.reshaped(shard_));
    return;
  }
  TrafficCounter::add(TrafficCounter::weights, 4.0 * static_cast<double>(room_) * (parts - 1));
  Kokkos::fence();  // the backward kernels wrote the block
  if (direct_) {
    collectives_->reduce_scatter_sum(block.data(), shard.data(), room_);
    return;
  }
  // Each run in its room; a shorter run's padding sums to zero.
  for (int r = 0; r < parts; ++r)
    Kokkos::deep_copy(part_of(buffer_, r * room_, run_count(r)), part_of(block.view(), run_first(r), run_count(r)));
  if constexpr (kHostAccessible) {
    collectives_->reduce_scatter_sum(buffer_.data(), sums_.data(), room_);
  } else {
    Kokkos::deep_copy(host_, buffer_);
    collectives_->reduce_scatter_sum(host_.data(), host_sums_.data(), room_);
    Kokkos::deep_copy(sums_, host_sums_);
  }
  Kokkos::deep_copy(shard.view(), part_of(sums_, 0, shard.numel()));
  Kokkos::fence();
}

}  // namespace tessera::parallel
