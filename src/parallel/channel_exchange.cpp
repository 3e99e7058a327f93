#include "tessera/parallel/channel_exchange.hpp"

#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

/// A block as [rows, 1, 1, 1, C]: channel slices are boxes along the last index.
Array5 as_rows(const DeviceView<float>& data, int64_t rows, int64_t channels) {
  return Array5{data, Index5{rows, 1, 1, 1, channels}};
}

}  // namespace

ChannelExchange::ChannelExchange(const ProcessGrid& grid, const Shape& whole, const std::string& where)
    : collectives_(std::make_shared<MpiCollectives>(grid.channels())), whole_(whole), slice_(whole), where_(where) {
  require_shape(whole.rank() >= 2, where + ": a channel split needs channels-last activations, got " + whole.str());
  const int c = whole.rank() - 1;
  slice_[c] = grid.local_channels(whole[c], where);
  if (whole.numel() > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a channel exchange of " + whole.str() + " needs more than 2^31 elements on one rank");
  buffer_ = DeviceView<float>("tessera::channel_exchange", static_cast<size_t>(whole.numel()));
  if constexpr (!host_accessible) host_ = Kokkos::create_mirror_view(buffer_);
}

void ChannelExchange::require(const Tensor& t, const Shape& expected, const char* what) const {
  require_shape(t.shape() == expected,
                where_ + ": channel exchange got a " + what + " " + t.shape().str() + ", expected " + expected.str());
}

void ChannelExchange::gather(const Tensor& slice, const Tensor& whole) {
  require(slice, slice_, "slice");
  require(whole, whole_, "whole block");
  const int parts = this->parts();
  const int64_t c = slice_[slice_.rank() - 1], rows = slice_.numel() / c, count = slice_.numel();
  if (parts == 1) {
    deep_copy(whole, slice);
    return;
  }
  Kokkos::fence();
  float* receive = buffer_.data();
  const float* send = slice.data();
  std::vector<float> host_send;
  if constexpr (!host_accessible) {
    host_send = slice.to_host();
    send = host_send.data();
    receive = host_.data();
  }
  TrafficCounter::add(TrafficCounter::channel, 4.0 * static_cast<double>(count) * (parts - 1));
  collectives_->allgather(send, receive, count);
  if constexpr (!host_accessible) Kokkos::deep_copy(buffer_, host_);
  const Array5 out = as_rows(whole.view(), rows, c * parts);
  for (int p = 0; p < parts; ++p)
    copy_sub_box("tessera::channel_gather_unpack", Array5::in_buffer(buffer_, p * count, Index5{rows, 1, 1, 1, c}),
                 Index5{0, 0, 0, 0, 0}, out, Index5{0, 0, 0, 0, p * c}, Index5{rows, 1, 1, 1, c});
}

void ChannelExchange::reduce_scatter(const Tensor& whole, const Tensor& slice) {
  require(whole, whole_, "whole block");
  require(slice, slice_, "slice");
  const int parts = this->parts();
  const int64_t c = slice_[slice_.rank() - 1], rows = slice_.numel() / c, count = slice_.numel();
  if (parts == 1) {
    deep_copy(slice, whole);
    return;
  }
  const Array5 in = as_rows(whole.view(), rows, c * parts);
  for (int p = 0; p < parts; ++p)
    copy_sub_box("tessera::channel_scatter_pack", in, Index5{0, 0, 0, 0, p * c},
                 Array5::in_buffer(buffer_, p * count, Index5{rows, 1, 1, 1, c}), Index5{0, 0, 0, 0, 0},
                 Index5{rows, 1, 1, 1, c});
  Kokkos::fence();
  TrafficCounter::add(TrafficCounter::channel, 4.0 * static_cast<double>(count) * (parts - 1));
  if constexpr (host_accessible) {
    collectives_->reduce_scatter_sum(buffer_.data(), slice.data(), count);
  } else {
    Kokkos::deep_copy(host_, buffer_);
    std::vector<float> received(static_cast<size_t>(count));
    collectives_->reduce_scatter_sum(host_.data(), received.data(), count);
    slice.copy_from_host(received);
  }
}

}  // namespace tessera::parallel
