#pragma once
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/layers/parameter_shard.hpp"
#include "tessera/parallel/channel_exchange.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::layers {

/// How a layer with weights (convolution, transposed convolution, dense) runs when its grid
/// splits channels over a group of P ranks; its input and output blocks are then channel
/// slices [..., about C/P] (Dryden et al., SC'19, "channel and filter parallelism"): ranges
/// that differ by at most one channel where P does not divide C (ProcessGrid::local_channels).
///  - filter: the rank holds the weights of its range of the C_out output channels. Forward
///    gathers the whole input over the group and computes its output slice; backward computes
///    the whole input gradient of its filters and reduce-scatters it, each rank keeping its
///    slice.
///  - channel: the rank holds the weights of its range of the C_in input channels. Forward
///    computes the whole output from its input slice and reduce-scatters the partial sums;
///    backward gathers the whole output gradient and computes its input slice's gradient
///    locally.
/// The weight gradient is local in both. Under `channel` the bias is whole and added (and its
/// gradient written) by the group's first rank only, so sums over the ranks count it once.
class ChannelSplit {
 public:
  enum class Kind { none, filter, channel };

  /// The kind `grid` asks for.
  static Kind kind_of(const parallel::ProcessGrid& grid);

  /// Builds the exchanges for this rank's blocks (shapes as the layer sees them: input and
  /// output slices). `whole_input`/`whole_output` are the blocks with all channels, of element
  /// type `type` (the layer's precision: the exchanges move it).
  void reshape(const parallel::ProcessGrid& grid, const Shape& whole_input, const Shape& whole_output,
               const std::string& where, ElementType type = ElementType::fp32);
  Kind kind() const { return kind_; }
  bool active() const { return kind_ != Kind::none; }

  /// The part of a weight `whole` this rank holds: output channels along `out_axis` under
  /// filter, input channels along `in_axis` under channel.
  /// Throws ShapeError naming `where` (the layer) when the channels do not divide.
  static ParameterShard weight_shard(const parallel::ProcessGrid& grid, const Shape& whole, int out_axis, int in_axis,
                                     const std::string& where);
  /// The part of a bias [C_out] this rank holds (the whole bias under channel).
  static ParameterShard bias_shard(const parallel::ProcessGrid& grid, const Shape& whole, const std::string& where);
  /// Whether this rank adds the bias and writes its gradient (all but channel's non-first ranks).
  static bool owns_bias(const parallel::ProcessGrid& grid);

  /// Forward: the tensor the op reads (the gathered whole input under filter, else `input`).
  const Tensor& op_input(const Tensor& input);
  /// Forward: the tensor the op writes (a whole-channel scratch under channel, else `output`).
  const Tensor& op_output(const Tensor& output) const;
  /// Forward, after the op: reduce-scatters the partial outputs into `output` under channel.
  void finish_output(const Tensor& output);
  /// Backward: the input the op read in forward (the gathered one under filter).
  const Tensor& saved_input(const Tensor& input) const;
  /// Backward: the output gradient the op reads (gathered whole under channel).
  const Tensor& op_grad_output(const Tensor& grad_output);
  /// Backward: where the op writes the input gradient (a whole-channel scratch under filter);
  /// empty when `grad_input` is.
  const Tensor& op_grad_input(const Tensor& grad_input) const;
  /// Backward, after the op: reduce-scatters the whole input gradient into `grad_input` under
  /// filter.
  void finish_grad_input(const Tensor& grad_input);

 private:
  Kind kind_ = Kind::none;
  parallel::ChannelExchange exchange_;  // the input's (filter) or the output's (channel)
  Tensor whole_, whole_grad_;           // gathered input and its gradient, or partial output and gathered gradient
};

}  // namespace tessera::layers
