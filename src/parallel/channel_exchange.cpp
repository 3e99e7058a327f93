#include "tessera/parallel/channel_exchange.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

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
    : ChannelExchange(grid.channels(), whole, slice_widths(grid, whole, where), where, type) {}

std::vector<int64_t> ChannelExchange::slice_widths(const ProcessGrid& grid, const Shape& whole,
                                                   const std::string& where) {
  require_shape(whole.rank() >= 2, where + ": a channel split needs channels-last activations, got " + whole.str());
  std::vector<int64_t> widths;
  for (int q = 0; q < grid.channels().size(); ++q)
    widths.push_back(grid.channel_count(whole[whole.rank() - 1], q, where));
  return widths;
}

ChannelExchange::ChannelExchange(const Communicator& group, const Shape& whole, std::vector<int64_t> widths,
                                 const std::string& where, ElementType type)
    : collectives_(std::make_shared<MpiCollectives>(group)),
      whole_(whole),
      slice_(whole),
      where_(where),
      type_(type),
      channels_(std::move(widths)) {
  require_shape(whole.rank() >= 2, where + ": a channel split needs channels-last activations, got " + whole.str());
  const int c = whole.rank() - 1;
  require_shape(static_cast<int>(channels_.size()) == group.size() &&
                    std::accumulate(channels_.begin(), channels_.end(), int64_t{0}) == whole[c],
                where + ": channel slices of " + std::to_string(channels_.size()) + " ranks do not make up " +
                    whole.str() + " over a group of " + std::to_string(group.size()));
  slice_[c] = channels_[static_cast<size_t>(group.rank())];
  if (whole.numel() > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a channel exchange of " + whole.str() + " needs more than 2^31 elements on one rank");
  const int parts = group.size();
  for (const int64_t width : channels_) widest_ = std::max(widest_, width);
  rows_ = whole.numel() / std::max<int64_t>(whole[c], 1);
  // Each rank's part of the buffers has room for the widest slice, so one collective of equal
  // counts moves slices that differ by a channel; a narrower slice leaves its room's tail zero.
  // Room for the P parts in fp32 (the sums) holds them in a 16-bit type too.
  const int64_t room = rows_ * widest_;
  buffer_ = DeviceView<float>("tessera::channel_exchange", static_cast<size_t>(parts * room));
  if constexpr (!kHostAccessible) host_ = Kokkos::create_mirror_view(buffer_);
  if ((type_ != ElementType::fp32 || !even()) && parts > 1) {
    send_ = DeviceView<float>("tessera::channel_exchange_send", static_cast<size_t>(words_for(room, type_)));
    sums_ = DeviceView<float>("tessera::channel_exchange_sums", static_cast<size_t>(room));
  }
}

bool ChannelExchange::even() const {
  return std::all_of(channels_.begin(), channels_.end(), [&](int64_t n) { return n == widest_; });
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
  if (parts == 1) {
    deep_copy(whole, slice);
    return;
  }
  // Each rank's part of the buffer is `words` words: room for the widest slice, two values a
  // word in a 16-bit type.
  const int64_t c = slice_[slice_.rank() - 1], words = words_for(rows_ * widest_, type_);
  const Index5 own_box{rows_, 1, 1, 1, c};
  const float* send = send_.size() == 0 ? slice.data() : send_.data();
  if (send_.size() != 0)
    copy_sub_box("tessera::channel_gather_pack", as_rows(slice, rows_, c), Index5{0, 0, 0, 0, 0},
                 Array5::in_buffer(send_, 0, own_box, type_), Index5{0, 0, 0, 0, 0}, own_box);
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
                      static_cast<double>(element_size(type_)) * static_cast<double>(rows_ * widest_) * (parts - 1));
  collectives_->allgather(send, receive, words);
  if constexpr (!kHostAccessible) Kokkos::deep_copy(buffer_, host_);
  const Array5 out = as_rows(whole, rows_, whole_[whole_.rank() - 1]);
  int64_t first = 0;
  for (int p = 0; p < parts; ++p) {
    const Index5 box{rows_, 1, 1, 1, channels_[static_cast<size_t>(p)]};
    copy_sub_box("tessera::channel_gather_unpack", Array5::in_buffer(buffer_, p * words, box, type_),
                 Index5{0, 0, 0, 0, 0}, out, Index5{0, 0, 0, 0, first}, box);
    first += box[4];
  }
}

void ChannelExchange::reduce_scatter(const Tensor& whole, const Tensor& slice) {
  require(whole, whole_, "whole block");
  require(slice, slice_, "slice");
  const int parts = this->parts();
  if (parts == 1) {
    deep_copy(slice, whole);
    return;
  }
  // The partial sums are packed in fp32 whatever the type (widened exactly), each rank's
  // channels in its room of the buffer, summed in fp32, and this rank's slice of the sum is
  // rounded once into the slice's type.
  const int64_t room = rows_ * widest_;
  const Array5 in = as_rows(whole, rows_, whole_[whole_.rank() - 1]);
  int64_t first = 0;
  for (int p = 0; p < parts; ++p) {
    const Index5 box{rows_, 1, 1, 1, channels_[static_cast<size_t>(p)]};
    copy_sub_box("tessera::channel_scatter_pack", in, Index5{0, 0, 0, 0, first},
                 Array5::in_buffer(buffer_, p * room, box), Index5{0, 0, 0, 0, 0}, box);
    first += box[4];
  }
  Kokkos::fence();
  TrafficCounter::add(TrafficCounter::channel, 4.0 * static_cast<double>(room) * (parts - 1));
  const Tensor sums = sums_.size() == 0 ? slice : Tensor(slice_, sums_);
  if constexpr (kHostAccessible) {
    collectives_->reduce_scatter_sum(buffer_.data(), sums_.size() == 0 ? slice.data() : sums_.data(), room);
  } else {
    Kokkos::deep_copy(host_, buffer_);
    std::vector<float> received(static_cast<size_t>(room));
    collectives_->reduce_scatter_sum(host_.data(), received.data(), room);
    received.resize(static_cast<size_t>(slice_.numel()));
    sums.copy_from_host(received);
  }
  if (sums_.size() != 0) deep_copy(slice, sums);
}

}  // namespace tessera::parallel
