#include "tessera/plan/layer_cost.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/layers/halo_overlapped_conv.hpp"
#include "tessera/model/graph.hpp"
#include "tessera/parallel/sample_shares.hpp"
#include "tessera/plan/block_shape.hpp"

namespace tessera::plan {
namespace {

constexpr double kFloat = sizeof(float);

/// Bytes per element of a node's activations.
double act_bytes(const PlanNode& n) { return static_cast<double>(element_size(n.precision)); }

/// The ranks one rank exchanges with when a tensor moves from `from` to `to`: along each axis
/// a block of a split into a parts overlaps b/gcd(a, b) blocks of a split into b, and the other
/// way round for what it receives.
int64_t exchange_peers(const parallel::Distribution& from, const parallel::Distribution& to) {
  const int a[5] = {from.sample, from.depth, from.height, from.width, from.channel_parts()};
  const int b[5] = {to.sample, to.depth, to.height, to.width, to.channel_parts()};
  int64_t sends = 1, receives = 1;
  for (int k = 0; k < 5; ++k) {
    const int g = std::gcd(a[k], b[k]);
    sends *= b[k] / g;
    receives *= a[k] / g;
  }
  return std::max(sends, receives);
}

bool same_blocks(const parallel::Distribution& a, const parallel::Distribution& b) {
  return a.sample == b.sample && a.depth == b.depth && a.height == b.height && a.width == b.width &&
         a.channel_parts() == b.channel_parts();
}

/// (D, H, W) of a channels-last block of rank 4 (D = 1) or 5.
std::array<int64_t, 3> space_of(const Shape& s) {
  if (s.rank() == 5) return {s[1], s[2], s[3]};
  return {1, s[1], s[2]};
}

Shape must_block(const Shape& global, const parallel::Distribution& d) {
  auto b = block_shape(global, d);
  if (!b) throw Error("internal: " + global.str() + " does not split under " + d.str());
  return *b;
}

}  // namespace

LayerCostModel::LayerCostModel(const PlanGraph& graph, const MachineProfile& profile, LayerTimer& timer,
                               CostOptions options)
    : graph_(graph), profile_(profile), timer_(timer), options_(options) {
  for (const PlanNode& n : graph_.nodes)
    gradient_bytes_total_ += static_cast<double>(n.trainable) * static_cast<double>(element_size(options_.gradient_precision));
}

double LayerCostModel::seconds(Collective c, int64_t ranks, double bytes) const {
  return profile_.collective_seconds(c, ranks, bytes);
}

LocalWork LayerCostModel::local_work(size_t i, const parallel::Distribution& d) const {
  const PlanNode& n = graph_.nodes[i];
  LocalWork work;
  for (const Shape& in : n.global_inputs) work.inputs.push_back(must_block(in, d));
  work.input_gradient = std::find(n.inputs.begin(), n.inputs.end(), model::Graph::kModelInput) == n.inputs.end();
  if (n.channel_mixing && d.filter > 1) {
    // Filter split: every rank computes its output channels from the whole (gathered) input;
    // a 2-D split its column's filters from its row's input block (Pf slices).
    for (size_t k = 0; k < work.inputs.size(); ++k) {
      Shape& s = work.inputs[k];
      const int64_t whole = n.global_inputs[k][s.rank() - 1];
      s[s.rank() - 1] = d.channel > 1 ? std::min(whole, s[s.rank() - 1] * d.filter) : whole;
    }
    work.output_channel_parts = d.filter;
  }
  return work;
}

double LayerCostModel::output_bytes(size_t node, const parallel::Distribution& d) const {
  return static_cast<double>(must_block(graph_.nodes[node].global_output, d).numel()) * act_bytes(graph_.nodes[node]);
}

std::optional<std::string> LayerCostModel::refusal(size_t i, const parallel::Distribution& d) const {
  const PlanNode& n = graph_.nodes[i];
  if (d.ranks() != options_.ranks)
    return "distribution " + d.str() + " uses " + std::to_string(d.ranks()) + " ranks, not " +
           std::to_string(options_.ranks);
  if (d.is_spatial() && !n.spatial_split) return n.type + " cannot split its samples in space";
  if (d.splits_channels()) {
    if (!n.channel_split) return n.type + " cannot split its channels";
    const bool reads_input = std::find(n.inputs.begin(), n.inputs.end(), model::Graph::kModelInput) != n.inputs.end();
    if (reads_input) return "the model input keeps whole channels";
    if (i + 1 == graph_.nodes.size()) return "the last layer keeps whole channels";
    // A channel group exchanges activations at every layer and must share a node's memory, as
    // the run checks (check_channel_groups_within_nodes): with ranks placed consecutively, its
    // channel_parts() ranks stay on one node only if they divide the ranks per node.
    const int64_t per_node = profile_.ranks_per_node;
    if (options_.ranks > per_node && per_node % d.channel_parts() != 0)
      return "its channel groups of " + std::to_string(d.channel_parts()) +
             " ranks would span nodes (the machine profile has " + std::to_string(per_node) +
             " rank(s) per node, and a channel group must share a node's memory)";
  }
  for (const Shape& in : n.global_inputs)
    if (!block_shape(in, d)) return "input " + in.str() + " does not split under " + d.str();
  if (!block_shape(n.global_output, d)) return "output " + n.global_output.str() + " does not split under " + d.str();
  try {
    // The checks the layer runs: windows that line up with the blocks, halos no wider than
    // the neighbouring block.
    halo_plan(i, d);
  } catch (const ShapeError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::vector<parallel::Distribution> LayerCostModel::candidates(size_t i) const {
  const PlanNode& n = graph_.nodes[i];
  const int spatial_axes = graph_.sample_shape.rank() == 4 ? 3 : graph_.sample_shape.rank() == 3 ? 2 : 0;
  std::vector<parallel::Distribution> out;
  for (auto d : distributions_of(options_.ranks, n.spatial_split ? spatial_axes : 0, n.channel_split)) {
    if (refusal(i, d)) continue;
    out.push_back(d);
    // Weights sharded over the replicas (the cube where the channel group is a q x q grid and
    // q ranks split the samples): less memory and a smaller update for a gather before forward.
    if (n.trainable >= options_.ranks && options_.ranks > d.channel_parts()) {
      d.shard_weights = true;
      out.push_back(d);
    }
  }
  return out;
}

double LayerCostModel::compute_factor(const parallel::Distribution& d, int64_t batch) const {
  const std::vector<double>& speeds = options_.rank_speeds;
  if (speeds.empty() && options_.share_weights.empty()) return 1.0;
  const int ranks = options_.ranks, groups = d.sample, per_group = ranks / groups;
  parallel::SampleShares shares(ranks);
  if (!options_.share_weights.empty()) shares.set_weights(options_.share_weights, "plan");
  const std::vector<int64_t> rows = shares.rows(batch, groups);
  const double largest = static_cast<double>((batch + groups - 1) / groups);  // the block the times are for
  double factor = 0.0;
  for (int g = 0; g < groups; ++g) {
    double slowest = 1.0;
    if (!speeds.empty())
      slowest = *std::min_element(speeds.begin() + g * per_group, speeds.begin() + (g + 1) * per_group);
    factor = std::max(factor, static_cast<double>(rows[static_cast<size_t>(g)]) / largest / slowest);
  }
  return factor;
}

LayerCost LayerCostModel::layer_cost(size_t i, const parallel::Distribution& d) {
  LayerCost c = unscaled_layer_cost(i, d);
  c.compute *= compute_factor(d, graph_.nodes[i].global_output[0]);
  // Every rank updates its parameters: the slowest sets the pace.
  if (!options_.rank_speeds.empty())
    c.update /= *std::min_element(options_.rank_speeds.begin(), options_.rank_speeds.end());
  return c;
}

LayerTime LayerCostModel::compute_time(size_t i, const parallel::Distribution& d) {
  if (auto why = refusal(i, d)) throw ConfigError("layer '" + graph_.nodes[i].name + "'", *why);
  LayerTime t = unscaled_time(i, d);
  const double factor = compute_factor(d, graph_.nodes[i].global_output[0]);
  t.forward *= factor;
  t.backward *= factor;
  return t;
}

bool LayerCostModel::measures_communication(const parallel::Distribution& d) const {
  return timer_.measures_distributed(d);
}

bool LayerCostModel::halo_backward(size_t i) const {
  const PlanNode& n = graph_.nodes[i];
  const bool input_gradient =
      std::find(n.inputs.begin(), n.inputs.end(), model::Graph::kModelInput) == n.inputs.end();
  return input_gradient || (n.window && n.window->on_output);
}

LayerTime LayerCostModel::unscaled_time(size_t i, const parallel::Distribution& d) {
  const PlanNode& n = graph_.nodes[i];
  const LocalWork work = local_work(i, d);
  if (timer_.measures_distributed(d)) {
    std::vector<Shape> blocks;
    for (const Shape& in : n.global_inputs) blocks.push_back(must_block(in, d));
    return timer_.time_distributed(n, d, blocks, work.input_gradient);
  }
  return timer_.time(n, work);
}

LayerCost LayerCostModel::unscaled_layer_cost(size_t i, const parallel::Distribution& d) {
  if (auto why = refusal(i, d)) throw ConfigError("layer '" + graph_.nodes[i].name + "'", *why);
  const PlanNode& n = graph_.nodes[i];
  LayerCost c;
  const Shape out = must_block(n.global_output, d);
  const LayerTime t = unscaled_time(i, d);
  c.compute = t.forward + t.backward;
  // The layer's own state and workspaces, as measured; a convolution that may fuse with its
  // pool leaves them to the edge, like its output.
  c.memory += n.fuses_with_consumer ? 0.0 : t.memory;
  add_parameters(c, n, d);
  if (timer_.measures_distributed(d)) {
    // Measured as it runs, split over the measuring ranks: its halo exchanges, channel-group
    // exchanges and statistics sums are in the time, and its buffers in the memory.
    if (const auto plan = halo_plan(i, d)) c.halo_bytes = halo_bytes_sent(*plan, halo_backward(i), n.precision);
  } else {
    if (const auto plan = halo_plan(i, d))
      add_halo(c, *plan, halo_backward(i), n.precision, overlapped_share(i, d, *plan) * t.forward);
    for (const LayerExchange& e : exchanges(i, d)) {
      const double s = seconds(e.collective, e.ranks, e.bytes);
      if (e.part == LayerExchange::Part::reduction) c.reduction += s;
      if (e.part == LayerExchange::Part::channel_exchange) c.channel_exchange += s;
      if (e.part == LayerExchange::Part::weight_shards) c.gradient += s;
    }
    c.memory += channel_exchange_memory(n, d, out);
  }
  // The output and its gradient (and a scratch gradient where several layers read it). A
  // layer that may fuse with its max pool leaves this to the edge (edge_cost).
  if (!n.fuses_with_consumer) c.memory += static_cast<double>(out.numel()) * act_bytes(n) * (n.consumers > 1 ? 3 : 2);
  return c;
}

std::vector<LayerExchange> LayerCostModel::exchanges(size_t i, const parallel::Distribution& d) const {
  const PlanNode& n = graph_.nodes[i];
  const Shape out = must_block(n.global_output, d);
  std::vector<LayerExchange> list;
  add_spatial_reductions(list, n, d, out);
  add_channel_exchange(list, n, d, local_work(i, d), out);
  const int cp = d.channel_parts();
  const double trainable = static_cast<double>(n.trainable) / cp;
  if (trainable > 0 && d.shard_weights) {
    // Sharded over R replicas: the block, gathered before forward, then holds the gradient
    // that is reduce-scattered after backward. Both exchanges block the layer, while the
    // copies' all-reduce runs behind backprop: on the emulated cluster (perf/cluster.py's cube
    // part) the cube's step took the grid-with-copies step plus about its exchanges' time, at
    // equal bytes. So a sharded twin is priced as the copies plus its exchanges, and is
    // planned where only it fits.
    const int64_t replicas = options_.ranks / cp;
    const double run = trainable / static_cast<double>(replicas) * kFloat;
    list.push_back({Collective::allgather, ExchangeGroup::replicas, replicas, run, Pass::forward,
                    LayerExchange::Part::weight_shards});
    list.push_back({Collective::reduce_scatter, ExchangeGroup::replicas, replicas, run, Pass::backward,
                    LayerExchange::Part::weight_shards});
  }
  return list;
}

std::optional<parallel::HaloPlan> LayerCostModel::halo_plan(size_t i, const parallel::Distribution& d) const {
  // The rank with the most neighbours: one before it along every split axis, and one after it
  // too where there are three parts or more.
  return halo_plan(i, d, {std::min(1, d.depth - 1), std::min(1, d.height - 1), std::min(1, d.width - 1)});
}

std::optional<parallel::HaloPlan> LayerCostModel::halo_plan(size_t i, const parallel::Distribution& d,
                                                            const std::array<int, 3>& spatial_index) const {
  const PlanNode& n = graph_.nodes[i];
  if (!n.window || !d.is_spatial()) return std::nullopt;
  const Shape& read = n.window->on_output ? n.global_output : n.global_inputs[0];
  const Shape& written = n.window->on_output ? n.global_inputs[0] : n.global_output;
  const Shape block = must_block(read, d);
  // A strided window splits where its input is cut in units of its stride, as the model cuts
  // it (model::align_spatial_splits); a chain of such layers gets coarser units at its wide
  // end, which this layer alone does not see, so its blocks are priced at the plane cut.
  parallel::SpatialAlignment alignment;
  const auto read_space = space_of(read), written_space = space_of(written);
  for (size_t k = 0; k < 3; ++k)
    if (n.window->window.stride[k] > 1 && read_space[k] != written_space[k])
      alignment.set(k, read_space[k], n.window->window.stride[k]);
  const auto widths =
      layers::halo_widths({d.depth, d.height, d.width}, read_space, alignment, n.window->window, n.name);
  return parallel::HaloPlan(d, spatial_index, block, widths, n.name);
}

double LayerCostModel::halo_copy_seconds(const parallel::HaloPlan& plan, ElementType type) const {
  // Packing reads the block and writes a buffer, unpacking the other way round.
  const double bandwidth = std::max(profile_.memory_bandwidth_per_rank, 1.0);
  return 2 * static_cast<double>(plan.bytes_sent(type) + plan.bytes_received(type)) / bandwidth;
}

double LayerCostModel::overlapped_share(size_t i, const parallel::Distribution& d,
                                        const parallel::HaloPlan& plan) const {
  const PlanNode& n = graph_.nodes[i];
  const layers::HaloOverlap mode = options_.halo_overlap;
  const bool conv = n.type == "conv3d" || n.type == "conv2d";
  if (mode == layers::HaloOverlap::off || !conv || !n.window || n.window->on_output || d.channel_parts() > 1)
    return 0.0;
  // The op on the haloed block, as HaloedInput makes it: the padded block, no padding along the
  // split axes (the halos stand in for it); then the layer's own rule on it.
  const layers::Window& w = n.window->window;
  const ActivationDims a = ActivationDims::of(plan.padded_shape());
  ops::ConvGeometry g;
  g.spatial_rank = a.spatial_rank;
  g.batch = a.n;
  g.in_channels = a.c;
  g.out_channels = n.global_output[n.global_output.rank() - 1];
  g.in_size = {a.d, a.h, a.w};
  g.kernel = w.kernel, g.stride = w.stride, g.dilation = w.dilation, g.padding = w.padding;
  const std::array<int, 3> parts{d.depth, d.height, d.width};
  for (size_t k = 0; k < 3; ++k)
    if (parts[k] > 1) g.padding[k] = 0;
  g.type = n.precision;
  const auto verdict = layers::HaloOverlappedConv::pays_off(g, plan.halo());
  // "always" overlaps wherever there is an interior, as HaloOverlappedConv::reshape does.
  return verdict.pays || mode == layers::HaloOverlap::always ? verdict.interior_share : 0.0;
}

double LayerCostModel::state_bytes(size_t i, const parallel::Distribution& d) const {
  const PlanNode& n = graph_.nodes[i];
  const double cp = d.channel_parts();
  const double replicas = d.shard_weights ? options_.ranks / cp : 1.0;
  return kFloat * (static_cast<double>(n.trainable) / cp / replicas * (1 + options_.optimizer_state) +
                   static_cast<double>(n.buffers) / cp);
}

void LayerCostModel::add_halo(LayerCost& c, const parallel::HaloPlan& plan, bool backward, ElementType type,
                              double hideable) const {
  const double element = static_cast<double>(element_size(type));
  // The messages to the neighbours across the same axes (the two faces of an axis, the edges
  // of two, the corners) travel at once, both ways, so the largest of them counts; the groups
  // are priced one after another. Backward sends the gradients that fell into the halos back.
  std::array<double, 8> largest{};  // by the axes a message crosses, as bits
  for (const auto* boxes : {&plan.sends(), &plan.receives()})
    for (const auto& box : *boxes) {
      const size_t axes = (box.direction[0] != 0 ? 4 : 0) + (box.direction[1] != 0 ? 2 : 0) + (box.direction[2] != 0);
      largest[axes] = std::max(largest[axes], static_cast<double>(box.count()) * element);
    }
  double wire = 0;
  for (const double bytes : largest)
    if (bytes > 0) wire += seconds(Collective::point_to_point, 2, bytes);
  const int directions = backward ? 2 : 1;
  // An overlapped convolution's forward messages travel while it computes its interior.
  c.halo += directions * (wire + halo_copy_seconds(plan, type)) - std::min(wire, hideable);
  c.halo_bytes += halo_bytes_sent(plan, backward, type);
  c.memory += static_cast<double>(plan.padded_shape().numel()) * element * directions;
}

double LayerCostModel::halo_bytes_sent(const parallel::HaloPlan& plan, bool backward, ElementType type) {
  return static_cast<double>(plan.bytes_sent(type) + (backward ? plan.bytes_received(type) : 0));
}

void LayerCostModel::add_spatial_reductions(std::vector<LayerExchange>& list, const PlanNode& n,
                                            const parallel::Distribution& d, const Shape& out) const {
  if (!d.is_spatial()) return;
  const int64_t spatial_ranks = int64_t{d.depth} * d.height * d.width;
  const Shape& in0 = n.global_inputs[0];
  using Part = LayerExchange::Part;
  if (n.buffers > 0) {
    // Statistics (batch norm): a sum per channel forward and backward over the sample's ranks.
    const double stats = 2.0 * static_cast<double>(out[out.rank() - 1]) * kFloat;
    for (const Pass pass : {Pass::forward, Pass::backward})
      list.push_back({Collective::allreduce, ExchangeGroup::spatial, spatial_ranks, stats, pass, Part::reduction});
  }
  if (in0.rank() >= 4 && n.global_output.rank() == 2) {
    const double in_bytes = static_cast<double>(must_block(in0, d).numel()) * act_bytes(n);
    const double out_bytes = static_cast<double>(out.numel()) * act_bytes(n);
    if (in0.numel() == n.global_output.numel()) {
      // flatten: each sample's blocks gathered, and the replicas' gradients summed back into
      // each block (SpatialGather's reduce-scatter; a trace of a run showed the planner
      // without it).
      list.push_back({Collective::allgather, ExchangeGroup::spatial, spatial_ranks, in_bytes, Pass::forward,
                      Part::reduction});
      list.push_back({Collective::reduce_scatter, ExchangeGroup::spatial, spatial_ranks, in_bytes, Pass::backward,
                      Part::reduction});
    } else {  // a spatial reduction (global pooling): partial results summed
      list.push_back({Collective::allreduce, ExchangeGroup::spatial, spatial_ranks, out_bytes, Pass::forward,
                      Part::reduction});
    }
  }
}

namespace {
/// A concatenation of channel-split inputs gathers them (its output channels are not its first
/// input's); other multi-input layers (add) run on their slices.
bool concatenates(const PlanNode& n) {
  return n.inputs.size() > 1 &&
         n.global_output[n.global_output.rank() - 1] != n.global_inputs[0][n.global_inputs[0].rank() - 1];
}
}  // namespace

void LayerCostModel::add_channel_exchange(std::vector<LayerExchange>& list, const PlanNode& n,
                                          const parallel::Distribution& d, const LocalWork& work,
                                          const Shape& out) const {
  const int cp = d.channel_parts();
  if (cp == 1) return;
  // Gathers move the layer's type; reduce-scatters sum partial results in fp32
  // (ChannelExchange).
  const double in_elements = static_cast<double>(must_block(n.global_inputs[0], d).numel());
  const double out_elements = static_cast<double>(out.numel());
  const double in_bytes = in_elements * act_bytes(n), out_bytes = out_elements * act_bytes(n);
  const auto add = [&](Collective c, ExchangeGroup g, int64_t ranks, double bytes, Pass pass) {
    list.push_back({c, g, ranks, bytes, pass, LayerExchange::Part::channel_exchange});
  };
  if (n.channel_mixing && d.filter > 1 && d.channel > 1) {
    // 2-D: the input block gathered over the row (filter ranks) and its gradient
    // reduce-scattered there; the partial outputs reduce-scattered over the column (channel
    // ranks) and the output gradient gathered there.
    add(Collective::allgather, ExchangeGroup::channel_row, d.filter, in_bytes, Pass::forward);
    add(Collective::reduce_scatter, ExchangeGroup::channel_column, d.channel, out_elements * kFloat, Pass::forward);
    add(Collective::allgather, ExchangeGroup::channel_column, d.channel, out_bytes, Pass::backward);
    if (work.input_gradient)
      add(Collective::reduce_scatter, ExchangeGroup::channel_row, d.filter, in_elements * kFloat, Pass::backward);
  } else if (n.channel_mixing && d.filter > 1) {
    add(Collective::allgather, ExchangeGroup::channel, cp, in_bytes, Pass::forward);
    if (work.input_gradient)
      add(Collective::reduce_scatter, ExchangeGroup::channel, cp, in_elements * kFloat, Pass::backward);
  } else if (n.channel_mixing) {
    add(Collective::reduce_scatter, ExchangeGroup::channel, cp, out_elements * kFloat, Pass::forward);
    add(Collective::allgather, ExchangeGroup::channel, cp, out_bytes, Pass::backward);
  } else if (concatenates(n)) {
    for (const Shape& s : work.inputs)
      add(Collective::allgather, ExchangeGroup::channel, cp, static_cast<double>(s.numel()) * act_bytes(n),
          Pass::forward);
    add(Collective::allgather, ExchangeGroup::channel, cp, out_bytes, Pass::backward);
  }
}

double LayerCostModel::channel_exchange_memory(const PlanNode& n, const parallel::Distribution& d,
                                               const Shape& out) const {
  const int cp = d.channel_parts();
  if (cp == 1) return 0;
  const double in_bytes = static_cast<double>(must_block(n.global_inputs[0], d).numel()) * act_bytes(n);
  const double out_bytes = static_cast<double>(out.numel()) * act_bytes(n);
  if (n.channel_mixing && d.filter > 1 && d.channel > 1) return 2 * in_bytes * d.filter + 2 * out_bytes * d.channel;
  if (n.channel_mixing && d.filter > 1) return 2 * in_bytes * cp;  // the gathered input and its gradient
  if (n.channel_mixing || concatenates(n)) return 2 * out_bytes * cp;  // the partial output, the gathered gradient
  return 0;
}

double LayerCostModel::gradient_bytes(size_t i, const parallel::Distribution& d) const {
  return static_cast<double>(graph_.nodes[i].trainable) / d.channel_parts() *
         static_cast<double>(element_size(options_.gradient_precision));
}

void LayerCostModel::add_parameters(LayerCost& c, const PlanNode& n, const parallel::Distribution& d) const {
  // Parameters: shards under a channel split, replicas summing gradients over the rest.
  const int cp = d.channel_parts();
  const double bandwidth = std::max(profile_.memory_bandwidth_per_rank, 1.0);
  const double trainable = static_cast<double>(n.trainable) / cp;
  const double buffers = static_cast<double>(n.buffers) / cp;
  if (trainable > 0) {
    // The whole model's gradients are summed in a few buckets: a measured sum over all ranks
    // is shared out by bytes; sums over fewer ranks (shards) are priced by the profile. They
    // travel in the gradient precision.
    const double sent = trainable * static_cast<double>(element_size(options_.gradient_precision));
    if (cp == 1 && options_.allreduce_seconds_per_byte > 0) {
      c.gradient += sent * options_.allreduce_seconds_per_byte;
    } else {
      // The reducer sums many layers in one bucket, which pays the allreduce's latency once:
      // a layer pays its share of its buckets' latencies (found by replaying steps in
      // tessera-sim: priced a latency per layer, the flood-filling network's 197 KB of
      // gradients over 2048 Theta nodes cost 0.6 ms, one bucket's sum 0.12 ms).
      const AlphaBetaTerms parts = profile_.collective_parts(Collective::allreduce, options_.ranks / cp, sent);
      const double buckets = std::max(1.0, std::ceil(gradient_bytes_total_ / options_.gradient_bucket_bytes));
      const double share = std::min(1.0, buckets * sent / std::max(gradient_bytes_total_, sent));
      c.gradient += parts.beta + parts.alpha * share;
    }
    c.update = options_.update_seconds_per_parameter > 0
                   ? trainable * options_.update_seconds_per_parameter
                   : trainable * kFloat * (3 + 2 * options_.optimizer_state) / bandwidth;
  }
  if (trainable > 0 && d.shard_weights) {
    // Sharded over R replicas (exchanges() has their gather and reduce-scatter): 1/R of the
    // parameters, gradients and state beside the gathered block.
    const int replicas = options_.ranks / cp;
    const double run = trainable / replicas * kFloat;
    c.memory += trainable * kFloat + run * (2 + options_.optimizer_state) + buffers * kFloat;
    return;
  }
  c.memory += trainable * kFloat * (2 + options_.optimizer_state) + buffers * kFloat;
}

std::optional<std::string> LayerCostModel::edge_refusal(size_t consumer, size_t k, const parallel::Distribution& from,
                                                        const parallel::Distribution& to) const {
  const Shape& global = graph_.nodes[consumer].global_inputs.at(k);
  if (global.rank() == 2 && !(from == to) && (from.is_spatial() || to.is_spatial()))
    return "features " + global.str() + " move only between sample and channel splits, not " + from.str() + " to " +
           to.str();
  return std::nullopt;
}

double LayerCostModel::fusion_seconds(size_t pool, const parallel::Distribution& d) const {
  const auto conv = static_cast<size_t>(graph_.nodes[pool].inputs.at(0));
  const LocalWork conv_work = local_work(conv, d), pool_work = local_work(pool, d);
  const LayerTime f = timer_.time_fused(graph_.nodes[conv], graph_.nodes[pool], conv_work);
  const LayerTime c = timer_.time(graph_.nodes[conv], conv_work), q = timer_.time(graph_.nodes[pool], pool_work);
  return f.forward + f.backward - (c.forward + c.backward) - (q.forward + q.backward);
}

bool LayerCostModel::fuses(size_t consumer, const parallel::Distribution& from,
                           const parallel::Distribution& to) const {
  const int producer = graph_.nodes[consumer].inputs.at(0);
  return producer != model::Graph::kModelInput && graph_.nodes[static_cast<size_t>(producer)].fuses_with_consumer &&
         from == to && !from.is_spatial() && !from.splits_channels();
}

EdgeMove LayerCostModel::edge_move(size_t consumer, size_t k, const parallel::Distribution& from,
                                   const parallel::Distribution& to) const {
  EdgeMove m;
  if (from == to) return m;
  const PlanNode& n = graph_.nodes[consumer];
  const int producer = n.inputs.at(k);
  const Shape& global = n.global_inputs.at(k);
  const auto a = block_shape(global, from), b = block_shape(global, to);
  if (!a || !b) throw Error("internal: edge tensor " + global.str() + " does not split");
  // The move carries the producer's type (the model input is fp32).
  const double element =
      producer == model::Graph::kModelInput ? kFloat : act_bytes(graph_.nodes[static_cast<size_t>(producer)]);
  const double from_bytes = static_cast<double>(a->numel()) * element;
  const double to_bytes = static_cast<double>(b->numel()) * element;
  const bool backward = producer != model::Graph::kModelInput;
  if (same_blocks(from, to)) {
    // The same blocks under another name (channel and filter split alike): a copy.
    m.kind = EdgeMove::Kind::copy;
    m.copy_seconds = (backward ? 2 : 1) * 2 * to_bytes / std::max(profile_.memory_bandwidth_per_rank, 1.0);
    return m;
  }
  // The redistribution's all-to-all carries data only between ranks whose blocks overlap:
  // priced as an all-to-all among that many ranks, not all of them.
  m.kind = EdgeMove::Kind::alltoall;
  m.peers = exchange_peers(from, to);
  m.forward_bytes = from_bytes;
  m.backward_bytes = backward ? to_bytes : 0.0;
  return m;
}

EdgeCost LayerCostModel::edge_cost(size_t consumer, size_t k, const parallel::Distribution& from,
                                   const parallel::Distribution& to) const {
  const PlanNode& n = graph_.nodes[consumer];
  const int producer = n.inputs.at(k);
  EdgeCost e;
  if (producer != model::Graph::kModelInput && graph_.nodes[static_cast<size_t>(producer)].fuses_with_consumer) {
    const auto p = static_cast<size_t>(producer);
    const bool fused = from == to && !from.is_spatial() && !from.splits_channels();
    if (fused) {
      e.time += fusion_seconds(consumer, from);
      e.memory += timer_.time_fused(graph_.nodes[p], n, local_work(p, from)).memory;
    } else {
      e.memory += 2 * output_bytes(p, from) + timer_.time(graph_.nodes[p], local_work(p, from)).memory;
    }
  }
  if (from == to) return e;
  if (edge_refusal(consumer, k, from, to)) {
    e.time = kRefusedSeconds;
    e.memory = kRefusedBytes;
    return e;
  }
  const EdgeMove m = edge_move(consumer, k, from, to);
  if (m.kind == EdgeMove::Kind::copy) e.time = m.copy_seconds;
  if (m.kind == EdgeMove::Kind::alltoall)
    e.time = seconds(Collective::alltoall, m.peers, m.forward_bytes) +
             (m.backward_bytes > 0 ? seconds(Collective::alltoall, m.peers, m.backward_bytes) : 0.0);
  const auto b = block_shape(n.global_inputs.at(k), to);
  const double element =
      producer == model::Graph::kModelInput ? kFloat : act_bytes(graph_.nodes[static_cast<size_t>(producer)]);
  const bool backward = producer != model::Graph::kModelInput;
  e.memory += static_cast<double>(b->numel()) * element * (backward ? 2 : 1);  // the moved tensor and its gradient
  return e;
}

double LayerCostModel::base_memory(const parallel::Distribution& input) const {
  std::vector<int64_t> dims{graph_.batch};
  for (auto v : graph_.sample_shape.dims()) dims.push_back(v);
  const auto block = block_shape(Shape(dims), input);
  if (!block) return profile_.process_baseline;
  // Targets: a class or value per voxel for per-voxel outputs, the output's features otherwise.
  const Shape& out = graph_.nodes.back().global_output;
  const double target_per_sample = graph_.per_voxel_output()
                                       ? static_cast<double>(out.numel() / out[0] / out[out.rank() - 1])
                                       : static_cast<double>(out.numel() / out[0]);
  const double sample = (static_cast<double>(block->numel() / (*block)[0]) +
                         target_per_sample / (input.depth * input.height * input.width)) *
                        kFloat;
  const double batch = sample * static_cast<double>((*block)[0]);
  const double stored = std::min(options_.store_bytes, sample * static_cast<double>(options_.data_samples));
  return profile_.process_baseline + batch * static_cast<double>(options_.batches_in_flight) + stored;
}

}  // namespace tessera::plan
