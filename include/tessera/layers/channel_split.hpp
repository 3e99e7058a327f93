#pragma once
#include <memory>
#include <string>
#include <utility>

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
///  - grid ({"channel": Pc, "filter": Pf}, a 2-D split as SUMMA splits a matrix product; Bian et
///    al. 2021): the group is a Pc × Pf grid, rank (i, j) holding activation slice i·Pf + j of
///    the P = Pc·Pf slices, so the activations are laid out as under a 1-D split of P. The rank
///    holds the weights from input block i (the slices of row i, consecutive channels) to the
///    filters of column j (slices j, Pf + j, …). Forward gathers its input block over its row
///    (Pf ranks) and reduce-scatters the partial outputs of its column's filters over its column
///    (Pc ranks), each keeping its slice; backward gathers the output gradient over the column
///    and reduce-scatters the input block's gradient over the row. Each rank holds 1/P of the
///    weights and gathers 1/Pc of the input rather than all of it.
/// The weight gradient is local in all. Under `channel` and `grid` the partial sums carry the
/// bias once: `channel`'s bias is whole and `grid`'s is a column's filters, added (and its
/// gradient written) by the first rank of the group or of the column only.
class ChannelSplit {
 public:
  enum class Kind { none, filter, channel, grid };

  /// The kind `grid` asks for.
  static Kind kind_of(const parallel::ProcessGrid& grid);

  /// Builds the exchanges for this rank's blocks (shapes as the layer sees them: input and
  /// output slices). `whole_input`/`whole_output` are the blocks with all channels, of element
  /// type `type` (the layer's precision: the exchanges move it).
  void reshape(const parallel::ProcessGrid& grid, const Shape& whole_input, const Shape& whole_output,
               const std::string& where, ElementType type = ElementType::fp32);
  Kind kind() const { return kind_; }
  bool active() const { return kind_ != Kind::none; }

  /// The input and output channels of the op this rank runs for a layer of `in` and `out`
  /// channels: its input slice or the gathered whole or block, its filters' slice, all of them
  /// or its column's.
  static int64_t op_in_channels(const parallel::ProcessGrid& grid, int64_t in, const std::string& where);
  static int64_t op_out_channels(const parallel::ProcessGrid& grid, int64_t out, const std::string& where);
  /// The shapes of the tensors op_input and op_output give, for blocks `input` and `output`
  /// (after reshape).
  Shape op_input_shape(const Shape& input) const;
  Shape op_output_shape(const Shape& output) const;

  /// The part of a weight `whole` this rank holds: output channels along `out_axis` under
  /// filter, input channels along `in_axis` under channel, a block of both under grid.
  /// Throws ShapeError naming `where` (the layer) when there are fewer channels than ranks.
  static ParameterShard weight_shard(const parallel::ProcessGrid& grid, const Shape& whole, int out_axis, int in_axis,
                                     const std::string& where);
  /// The part of a bias [C_out] this rank holds (the whole bias under channel, its column's
  /// filters under grid).
  static ParameterShard bias_shard(const parallel::ProcessGrid& grid, const Shape& whole, const std::string& where);
  /// Whether this rank adds the bias to the partial sums and writes its gradient (all but the
  /// non-first ranks of a channel group or of a grid's column).
  static bool owns_bias(const parallel::ProcessGrid& grid);
  /// Where this rank's slice of an output of `channels` channels lies in its bias shard:
  /// (offset, count); for layers that add the bias after the reduce-scatter.
  static std::pair<int64_t, int64_t> output_in_bias(const parallel::ProcessGrid& grid, int64_t channels,
                                                     const std::string& where);

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
  Shape whole_input_, whole_output_;
  ElementType type_ = ElementType::fp32;
  // The input's gather (filter, grid) and the output's reduce-scatter (channel, grid).
  std::unique_ptr<parallel::ChannelExchange> input_exchange_, output_exchange_;
  Tensor input_whole_, input_grad_;    // the gathered input and its gradient
  Tensor output_whole_, output_grad_;  // the partial output and the gathered output gradient
};

}  // namespace tessera::layers
