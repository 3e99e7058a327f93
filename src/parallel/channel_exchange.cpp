#include "tessera/parallel/channel_exchange.hpp"

#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

/// A block as [rows, 1, 1, 1, C]: channel slices are boxes along the last index.
Array5 as_rows(const Tensor& block, int64_t rows, int64_t channels) {
  Array5 a = Array5::of(block);
  a.extents = Index5{rows, 1, 1, 1, channels};
  return a;
}

}  // namespace

ChannelExchange::ChannelExchange(const ProcessGrid& grid, const Shape& whole, const std::string& where,
                                 ElementType type)
    : collectives_(std::make_shared<MpiCollectives>(grid.channels())),
      whole_(whole),
      slice_(whole),
      where_(where),
      type_(type) {
  require_shape(whole.rank() >= 2, where + ": a channel split needs channels-last activations, got " + whole.str());
  const int c = whole.rank() - 1;
  slice_[c] = grid.local_channels(whole[c], where);
  if (whole.numel() > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a channel exchange of " + whole.str() + " needs more than 2^31 elements on one rank");
  // Room for the P slices in fp32 (the sums) holds them in a 16-bit type too.
  const int64_t parts = grid.channels().size(), count = slice_.numel();
  buffer_ = DeviceView<float>("tessera::channel_exchange", static_cast<size_t>(parts * count));
  if constexpr (!kHostAccessible) host_ = Kokkos::create_mirror_view(buffer_);
  if (type_ != ElementType::fp32 && parts > 1) {
    send_ = DeviceView<float>("tessera::channel_exchange_send", static_cast<size_t>(words_for(count, type_)));
    sums_ = DeviceView<float>("tessera::channel_exchange_sums", static_cast<size_t>(count));
  }
}

void ChannelExchange::require(const Tensor& t, const Shape& expected, const char* what) const {
  require_shape(t.shape() == expected,
                where_ + ": channel exchange got a " + what + " " + t.shape().str() + ", expected " + expected.str());
  require_shape(t.type() == type_, where_ + ": channel exchange of " + element_type_name(type_) + " values got a " +
                                       what + " of " + element_type_name(t.type()));
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
  // Each rank's part of the buffer is `words` words: its values, two a word in a 16-bit type.
  const int64_t words = words_for(count, type_);
  const Index5 rows_box{rows, 1, 1, 1, c};
  const float* send = slice.type() == ElementType::fp32 ? slice.data() : send_.data();
  if (type_ != ElementType::fp32)
    copy_sub_box("tessera::channel_gather_pack", as_rows(slice, rows, c), Index5{0, 0, 0, 0, 0},
                 Array5::in_buffer(send_, 0, rows_box, type_), Index5{0, 0, 0, 0, 0}, rows_box);
  Kokkos::fence();
  float* receive = buffer_.data();
  std::vector<float> host_send;
  if constexpr (!kHostAccessible) {
    host_send.resize(static_cast<size_t>(words));
    Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace>(host_send.data(), host_send.size()),
                      DeviceView<float>(const_cast<float*>(send), static_cast<size_t>(words)));
    send = host_send.data();
    receive = host_.data();
  }
  TrafficCounter::add(TrafficCounter::channel,
                      static_cast<double>(element_size(type_)) * static_cast<double>(count) * (parts - 1));
  collectives_->allgather(send, receive, words);
  if constexpr (!kHostAccessible) Kokkos::deep_copy(buffer_, host_);
  const Array5 out = as_rows(whole, rows, c * parts);
  for (int p = 0; p < parts; ++p)
    copy_sub_box("tessera::channel_gather_unpack", Array5::in_buffer(buffer_, p * words, rows_box, type_),
                 Index5{0, 0, 0, 0, 0}, out, Index5{0, 0, 0, 0, p * c}, rows_box);
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
  // The partial sums are packed in fp32 whatever the type (widened exactly), summed in fp32,
  // and this rank's slice of the sum is rounded once into the slice's type.
  const Index5 rows_box{rows, 1, 1, 1, c};
  const Array5 in = as_rows(whole, rows, c * parts);
  for (int p = 0; p < parts; ++p)
    copy_sub_box("tessera::channel_scatter_pack", in, Index5{0, 0, 0, 0, p * c},
                 Array5::in_buffer(buffer_, p * count, rows_box), Index5{0, 0, 0, 0, 0}, rows_box);
  Kokkos::fence();
  TrafficCounter::add(TrafficCounter::channel, 4.0 * static_cast<double>(count) * (parts - 1));
  const Tensor sums = type_ == ElementType::fp32 ? slice : Tensor(slice_, sums_);
  if constexpr (kHostAccessible) {
    collectives_->reduce_scatter_sum(buffer_.data(), sums.data(), count);
  } else {
    Kokkos::deep_copy(host_, buffer_);
    std::vector<float> received(static_cast<size_t>(count));
    collectives_->reduce_scatter_sum(host_.data(), received.data(), count);
    sums.copy_from_host(received);
  }
  if (type_ != ElementType::fp32) deep_copy(slice, sums);
}

}  // namespace tessera::parallel
