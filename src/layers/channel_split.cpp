#include "tessera/layers/channel_split.hpp"

namespace tessera::layers {

ChannelSplit::Kind ChannelSplit::kind_of(const parallel::ProcessGrid& grid) {
  const auto& d = grid.distribution();
  if (d.filter > 1) return Kind::filter;
  if (d.channel > 1) return Kind::channel;
  return Kind::none;
}

void ChannelSplit::reshape(const parallel::ProcessGrid& grid, const Shape& whole_input, const Shape& whole_output,
                           const std::string& where, ElementType type) {
  kind_ = kind_of(grid);
  if (kind_ == Kind::none) return;
  const Shape& whole = kind_ == Kind::filter ? whole_input : whole_output;
  if (exchange_.whole_shape() == whole && exchange_.type() == type && !whole_.empty()) return;
  exchange_ = parallel::ChannelExchange(grid, whole, where, type);
  whole_ = Tensor(whole, type, "tessera::channel_split_whole");
  whole_grad_ = Tensor(whole, type, "tessera::channel_split_whole_grad");
}

ParameterShard ChannelSplit::weight_shard(const parallel::ProcessGrid& grid, const Shape& whole, int out_axis,
                                          int in_axis, const std::string& where) {
  switch (kind_of(grid)) {
    case Kind::filter: return ParameterShard::of(grid, whole, out_axis, where);
    case Kind::channel: return ParameterShard::of(grid, whole, in_axis, where);
    case Kind::none: break;
  }
  return ParameterShard::of(grid, whole, -1, where);
}

ParameterShard ChannelSplit::bias_shard(const parallel::ProcessGrid& grid, const Shape& whole,
                                        const std::string& where) {
  if (kind_of(grid) == Kind::filter) return ParameterShard::of(grid, whole, 0, where);
  ParameterShard whole_bias;
  whole_bias.whole = whole;
  return whole_bias;
}

bool ChannelSplit::owns_bias(const parallel::ProcessGrid& grid) {
  return kind_of(grid) != Kind::channel || grid.channel_index() == 0;
}

const Tensor& ChannelSplit::op_input(const Tensor& input) {
  if (kind_ != Kind::filter) return input;
  exchange_.gather(input, whole_);
  return whole_;
}

const Tensor& ChannelSplit::op_output(const Tensor& output) const { return kind_ == Kind::channel ? whole_ : output; }

void ChannelSplit::finish_output(const Tensor& output) {
  if (kind_ == Kind::channel) exchange_.reduce_scatter(whole_, output);
}

const Tensor& ChannelSplit::saved_input(const Tensor& input) const { return kind_ == Kind::filter ? whole_ : input; }

const Tensor& ChannelSplit::op_grad_output(const Tensor& grad_output) {
  if (kind_ != Kind::channel) return grad_output;
  exchange_.gather(grad_output, whole_grad_);
  return whole_grad_;
}

const Tensor& ChannelSplit::op_grad_input(const Tensor& grad_input) const {
  return kind_ == Kind::filter && !grad_input.empty() ? whole_grad_ : grad_input;
}

void ChannelSplit::finish_grad_input(const Tensor& grad_input) {
  if (kind_ == Kind::filter && !grad_input.empty()) exchange_.reduce_scatter(whole_grad_, grad_input);
}

}  // namespace tessera::layers
