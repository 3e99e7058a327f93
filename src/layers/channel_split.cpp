#include "tessera/layers/channel_split.hpp"

#include <numeric>

#include "tessera/core/even_split.hpp"

namespace tessera::layers {
namespace {

/// The fine slices of a 2-D channel group: its Pc·Pf ranks split every activation's C channels
/// into consecutive slices as a 1-D group of Pc·Pf would (rank c holds slice c). Row r holds
/// slices r·Pf … r·Pf + Pf − 1 (consecutive channels), column c slices c, Pf + c, ….
struct GridSlices {
  /// Slices first, first + step, … (count of them).
  struct Run {
    int first, step, count;
  };
  int rows = 1, columns = 1, row = 0, column = 0;

  explicit GridSlices(const parallel::ProcessGrid& grid)
      : rows(grid.distribution().channel),
        columns(grid.distribution().filter),
        row(grid.channel_index() / columns),
        column(grid.channel_index() % columns) {}
  int parts() const { return rows * columns; }
  /// Row r's slices, by column: the input block the row gathers.
  Run row_run(int r) const { return {r * columns, 1, columns}; }
  /// Column c's slices, by row: the filters the column computes.
  Run column_run(int c) const { return {c, columns, rows}; }
  /// The widths of `run`'s slices of `channels`.
  std::vector<int64_t> widths(int64_t channels, Run run) const {
    std::vector<int64_t> w;
    for (int q = 0; q < run.count; ++q) w.push_back(even_part(channels, parts(), run.first + q * run.step));
    return w;
  }
  /// The channels of `run`'s slices, in order.
  std::vector<int64_t> held(int64_t channels, Run run) const {
    std::vector<int64_t> all;
    for (int q = 0; q < run.count; ++q) {
      const int slice = run.first + q * run.step;
      const auto part =
          ParameterShard::range(even_boundary(channels, parts(), slice), even_part(channels, parts(), slice));
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }
};

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

Shape with_channels(Shape s, int64_t channels) {
  s[s.rank() - 1] = channels;
  return s;
}

void require_channels(const parallel::ProcessGrid& grid, int64_t channels, const std::string& where) {
  grid.channel_count(channels, 0, where);  // fewer channels than ranks: the 1-D split's error
}

/// The channels of `channels` an op reads (`row`: its input) or writes (its output): this
/// rank's slice under the 1-D kind `sliced` that splits that side, its row's block or its
/// column's filters under grid, all of them otherwise.
int64_t op_channels(const parallel::ProcessGrid& grid, int64_t channels, ChannelSplit::Kind sliced, bool row,
                    const std::string& where) {
  const ChannelSplit::Kind kind = ChannelSplit::kind_of(grid);
  if (kind == sliced) return grid.local_channels(channels, where);
  if (kind != ChannelSplit::Kind::grid) return channels;
  require_channels(grid, channels, where);
  const GridSlices g(grid);
  return sum(g.widths(channels, row ? g.row_run(g.row) : g.column_run(g.column)));
}

}  // namespace

ChannelSplit::Kind ChannelSplit::kind_of(const parallel::ProcessGrid& grid) {
  const auto& d = grid.distribution();
  if (d.filter > 1 && d.channel > 1) return Kind::grid;
  if (d.filter > 1) return Kind::filter;
  if (d.channel > 1) return Kind::channel;
  return Kind::none;
}

void ChannelSplit::reshape(const parallel::ProcessGrid& grid, const Shape& whole_input, const Shape& whole_output,
                           const std::string& where, ElementType type) {
  kind_ = kind_of(grid);
  if (kind_ == Kind::none) return;
  if (whole_input == whole_input_ && whole_output == whole_output_ && type == type_) return;
  whole_input_ = whole_input;
  whole_output_ = whole_output;
  type_ = type;
  const int c = whole_input.rank() - 1;
  input_exchange_.reset();
  output_exchange_.reset();
  const auto gathered = [&](const Shape& whole) { return Tensor(whole, type, "tessera::channel_split_whole"); };
  if (kind_ == Kind::filter) {
    input_exchange_ = std::make_unique<parallel::ChannelExchange>(grid, whole_input, where, type);
  } else if (kind_ == Kind::channel) {
    output_exchange_ = std::make_unique<parallel::ChannelExchange>(grid, whole_output, where, type);
  } else {
    // 2-D: a row gathers its input block, a column reduce-scatters its filters' partial sums.
    const GridSlices g(grid);
    require_channels(grid, whole_input[c], where);
    require_channels(grid, whole_output[c], where);
    const auto in = g.widths(whole_input[c], g.row_run(g.row)), out = g.widths(whole_output[c], g.column_run(g.column));
    input_exchange_ = std::make_unique<parallel::ChannelExchange>(grid.channel_rows(),
                                                                  with_channels(whole_input, sum(in)), in, where, type);
    output_exchange_ = std::make_unique<parallel::ChannelExchange>(
        grid.channel_columns(), with_channels(whole_output, sum(out)), out, where, type);
  }
  if (input_exchange_) {
    input_whole_ = gathered(input_exchange_->whole_shape());
    input_grad_ = gathered(input_exchange_->whole_shape());
  }
  if (output_exchange_) {
    output_whole_ = gathered(output_exchange_->whole_shape());
    output_grad_ = gathered(output_exchange_->whole_shape());
  }
}

int64_t ChannelSplit::op_in_channels(const parallel::ProcessGrid& grid, int64_t channels, const std::string& where) {
  return op_channels(grid, channels, Kind::channel, true, where);
}

int64_t ChannelSplit::op_out_channels(const parallel::ProcessGrid& grid, int64_t channels, const std::string& where) {
  return op_channels(grid, channels, Kind::filter, false, where);
}

ParameterShard ChannelSplit::weight_shard(const parallel::ProcessGrid& grid, const Shape& whole, int out_axis,
                                          int in_axis, const std::string& where) {
  switch (kind_of(grid)) {
    case Kind::filter: return ParameterShard::of(grid, whole, out_axis, where);
    case Kind::channel: return ParameterShard::of(grid, whole, in_axis, where);
    case Kind::grid: {
      require_channels(grid, whole[in_axis], where);
      require_channels(grid, whole[out_axis], where);
      // Rank (i, j) holds the weights from input block i to the filters of column j.
      const GridSlices g(grid);
      ParameterShard s;
      s.whole = whole;
      s.axes = {in_axis, out_axis};
      for (int q = 0; q < g.parts(); ++q)
        s.held.push_back(
            {g.held(whole[in_axis], g.row_run(q / g.columns)), g.held(whole[out_axis], g.column_run(q % g.columns))});
      s.index = grid.channel_index();
      s.group = grid.channels();
      s.replicas = grid.replicas();
      return s;
    }
    case Kind::none: break;
  }
  return ParameterShard::of(grid, whole, -1, where);
}

ParameterShard ChannelSplit::bias_shard(const parallel::ProcessGrid& grid, const Shape& whole,
                                        const std::string& where) {
  if (kind_of(grid) == Kind::filter) return ParameterShard::of(grid, whole, 0, where);
  if (kind_of(grid) == Kind::grid) {
    // A column's filters: every rank of the column holds them (only row 0 adds them), so their
    // gradient sums over all of those; a row holds each column's once (the gather's group).
    require_channels(grid, whole[0], where);
    const GridSlices g(grid);
    ParameterShard s;
    s.whole = whole;
    s.axes = {0};
    for (int q = 0; q < g.columns; ++q) s.held.push_back({g.held(whole[0], g.column_run(q))});
    s.index = g.column;
    s.group = grid.channel_rows();
    s.replicas = grid.filter_replicas();
    return s;
  }
  ParameterShard whole_bias;
  whole_bias.whole = whole;
  return whole_bias;
}

std::pair<int64_t, int64_t> ChannelSplit::output_in_bias(const parallel::ProcessGrid& grid, int64_t channels,
                                                         const std::string& where) {
  switch (kind_of(grid)) {
    case Kind::channel: return {grid.first_channel(channels, where), grid.local_channels(channels, where)};
    case Kind::filter: return {0, grid.local_channels(channels, where)};
    case Kind::grid: {
      const GridSlices g(grid);
      const auto widths = g.widths(channels, g.column_run(g.column));
      const auto row = static_cast<size_t>(g.row);
      return {std::accumulate(widths.begin(), widths.begin() + static_cast<long>(row), int64_t{0}), widths[row]};
    }
    case Kind::none: break;
  }
  return {0, channels};
}

bool ChannelSplit::owns_bias(const parallel::ProcessGrid& grid) {
  switch (kind_of(grid)) {
    case Kind::channel: return grid.channel_index() == 0;
    case Kind::grid: return grid.channel_index() / grid.distribution().filter == 0;
    case Kind::filter:
    case Kind::none: break;
  }
  return true;
}

Shape ChannelSplit::op_input_shape(const Shape& input) const {
  return input_exchange_ ? input_exchange_->whole_shape() : input;
}

Shape ChannelSplit::op_output_shape(const Shape& output) const {
  return output_exchange_ ? output_exchange_->whole_shape() : output;
}

const Tensor& ChannelSplit::op_input(const Tensor& input) {
  if (!input_exchange_) return input;
  input_exchange_->gather(input, input_whole_);
  return input_whole_;
}

const Tensor& ChannelSplit::op_output(const Tensor& output) const { return output_exchange_ ? output_whole_ : output; }

void ChannelSplit::finish_output(const Tensor& output) {
  if (output_exchange_) output_exchange_->reduce_scatter(output_whole_, output);
}

const Tensor& ChannelSplit::saved_input(const Tensor& input) const { return input_exchange_ ? input_whole_ : input; }

const Tensor& ChannelSplit::op_grad_output(const Tensor& grad_output) {
  if (!output_exchange_) return grad_output;
  output_exchange_->gather(grad_output, output_grad_);
  return output_grad_;
}

const Tensor& ChannelSplit::op_grad_input(const Tensor& grad_input) const {
  return input_exchange_ && !grad_input.empty() ? input_grad_ : grad_input;
}

void ChannelSplit::finish_grad_input(const Tensor& grad_input) {
  if (input_exchange_ && !grad_input.empty()) input_exchange_->reduce_scatter(input_grad_, grad_input);
}

}  // namespace tessera::layers
