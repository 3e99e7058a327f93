#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tessera/layers/halo_overlap.hpp"
#include "tessera/parallel/distribution.hpp"
#include "tessera/parallel/halo_plan.hpp"
#include "tessera/plan/layer_timer.hpp"
#include "tessera/plan/layout_search.hpp"
#include "tessera/plan/machine_profile.hpp"
#include "tessera/plan/plan_graph.hpp"

namespace tessera::plan {

/// The time and memory given to a layout the model cannot run (an edge no redistribution can
/// make), so the search never picks it while something else runs, whether it minimises time
/// or, when nothing fits, memory.
constexpr double kRefusedSeconds = 1e30, kRefusedBytes = 1e30;

/// What the cost model needs besides the graph and the machine.
struct CostOptions {
  int ranks = 1;
  /// Values the optimizer keeps per trainable element (SGD with momentum 1, Adam 2).
  double optimizer_state = 1;
  /// The data a rank holds: samples the in-memory store may keep (each rank its block of
  /// them) within `store_bytes`, and the batches of model input alive at once (the trainer's
  /// and those prefetched).
  int64_t data_samples = 0;
  double store_bytes = 0;
  int64_t batches_in_flight = 1;
  /// Seconds the optimizer takes per parameter it updates (measured over the whole model);
  /// 0: estimated from the bandwidth.
  double update_seconds_per_parameter = 0;
  /// Seconds per byte of the gradients' allreduce over all ranks, measured for the whole
  /// model's gradients when the measuring ranks are the plan's; 0: the profile's α-β cost.
  double allreduce_seconds_per_byte = 0;
  /// The type gradient sums travel in ("training.gradient_precision").
  ElementType gradient_precision = ElementType::fp32;
  /// The gradient reducer's bucket, in bytes of the gradient precision
  /// ("training.allreduce_bucket_kb" KiB of fp32 gradients): layers summed in one bucket share
  /// its latency.
  double gradient_bucket_bytes = 4096.0 * 1024;
  /// Each rank's compute speed relative to the measured layer times (MachineProfile::
  /// rank_speeds); empty: all 1. A sample group computes at its slowest rank's speed.
  std::vector<double> rank_speeds = {};
  /// The weights the batch is shared by (parallel::SampleShares, one per rank); empty: even.
  std::vector<int64_t> share_weights = {};
  /// The model's "halo_overlap": which convolutions compute their interior while their forward
  /// halos travel (overlapped_share).
  layers::HaloOverlap halo_overlap = layers::HaloOverlap::where_it_pays;
};

/// One layer's cost on one rank per training step under one distribution (seconds, bytes).
struct LayerCost {
  double compute = 0;           // forward and backward on this rank's block (measured)
  double halo = 0;              // halo exchanges of a spatially split window, forward and backward,
                                // less the forward messages an overlapped convolution hides
  double channel_exchange = 0;  // all-gathers and reduce-scatters inside the channel group
  double reduction = 0;         // sums over the spatial group (statistics, pooled or gathered features)
  double gradient = 0;          // the allreduce of the parameters' gradients over their replicas
  double update = 0;            // the optimizer's update of this rank's parameters
  double memory = 0;            // bytes held for the step: output and gradient, halo and exchange
                                // buffers, parameters with gradients and optimizer state
  double halo_bytes = 0;        // bytes the busiest rank's halo exchanges send, forward and backward
  double communication() const { return halo + channel_exchange + reduction + gradient; }
  double time() const { return compute + update + communication(); }
};

/// The ranks one of a layer's collectives runs over, by their role under the layer's
/// distribution (parallel::ProcessGrid names them alike).
enum class ExchangeGroup {
  spatial,         // the ranks that share a sample (depth x height x width)
  channel,         // the channel group (channel_parts() ranks)
  channel_row,     // a 2-D channel split's row: the filter ranks that share an input-channel block
  channel_column,  // its column: the channel ranks that hold the same filters
  replicas,        // the ranks that hold the same parameters (ranks / channel_parts())
};

enum class Pass { forward, backward };

/// One collective a layer runs in a training step besides its halo exchange and the sum of its
/// gradients: what the cost model prices (with the profile's alpha-beta costs) and the step
/// schedule replays (docs/simulation.md).
struct LayerExchange {
  enum class Part { reduction, channel_exchange, weight_shards };
  Collective collective = Collective::allreduce;
  ExchangeGroup group = ExchangeGroup::spatial;
  int64_t ranks = 1;  // the group's size
  double bytes = 0;   // n as LinkCost defines it
  Pass pass = Pass::forward;
  Part part = Part::reduction;
};

/// How an edge's tensor moves between its producer's distribution and its consumer's.
struct EdgeMove {
  enum class Kind { none, copy, alltoall };
  Kind kind = Kind::none;
  int64_t peers = 1;          // alltoall: the ranks whose blocks overlap one rank's
  double forward_bytes = 0;   // alltoall: what one rank sends forward (its block of the tensor)
  double backward_bytes = 0;  // and backward (its block of the gradient); 0 for the model input
  double copy_seconds = 0;    // copy: forward and backward together
};

/// The performance model of one graph on one machine (docs/plan.md): per layer and
/// distribution the measured compute time of the rank's block, the α-β time of what it
/// exchanges, and the memory it holds; per edge between layouts the redistribution. Of the
/// overlap of communication with computation only a convolution's forward halo exchange
/// behind its interior is credited (as HaloOverlappedConv runs it); the gradient sums behind
/// backprop are not: the overlap Tessera achieves there on the machines measured so far is too
/// small to count on (docs/plan.md, "What is modelled").
class LayerCostModel {
 public:
  LayerCostModel(const PlanGraph& graph, const MachineProfile& profile, LayerTimer& timer, CostOptions options);

  const PlanGraph& graph() const { return graph_; }
  void set_update_seconds_per_parameter(double s) { options_.update_seconds_per_parameter = s; }
  void set_allreduce_seconds_per_byte(double s) { options_.allreduce_seconds_per_byte = s; }
  /// Prices later layer costs with the batch shared by `weights` (empty: evenly).
  void set_share_weights(std::vector<int64_t> weights) { options_.share_weights = std::move(weights); }
  const CostOptions& options() const { return options_; }
  /// How much longer a layer under `d` computes than its largest block does at speed 1: the
  /// slowest sample group's rows over its speed, against the largest even block (1 when
  /// every rank has speed 1 and the shares are even). The layer's batch is `batch`.
  double compute_factor(const parallel::Distribution& d, int64_t batch) const;
  /// Why node `node` cannot run under `d` (shapes that do not split, a split the layer does
  /// not take, a window that does not line up); empty when it can.
  std::optional<std::string> refusal(size_t node, const parallel::Distribution& d) const;
  /// The halo exchange of node `node` under `d` for the rank the model prices (the one with the
  /// most neighbours); none when the node has no window or `d` does not split space. Throws
  /// ShapeError when the window does not line up with the blocks or a halo is too wide.
  std::optional<parallel::HaloPlan> halo_plan(size_t node, const parallel::Distribution& d) const;
  /// The distributions of options().ranks ranks node `node` can run under.
  std::vector<parallel::Distribution> candidates(size_t node) const;
  /// The halo exchange of node `node` under `d` for the rank at `spatial_index`.
  std::optional<parallel::HaloPlan> halo_plan(size_t node, const parallel::Distribution& d,
                                              const std::array<int, 3>& spatial_index) const;
  /// Measures the layer if its time on these shapes is not known yet.
  LayerCost layer_cost(size_t node, const parallel::Distribution& d);
  /// Node `node`'s forward and backward times on one rank under `d`, as layer_cost counts them
  /// (at the slowest sample group's pace).
  LayerTime compute_time(size_t node, const parallel::Distribution& d);
  /// Whether layer times under `d` are measured split over ranks, with their halo exchanges,
  /// channel exchanges and sums inside (LayerTimer::measures_distributed).
  bool measures_communication(const parallel::Distribution& d) const;
  /// The collectives of node `node` under `d` that layer_cost prices apart from its halo and
  /// gradient sum: statistics and pooled or gathered features over the spatial group, gathers
  /// and reduce-scatters in the channel group, and the weight shards' gather and
  /// reduce-scatter.
  std::vector<LayerExchange> exchanges(size_t node, const parallel::Distribution& d) const;
  /// Whether backward sends node `node`'s halo gradients back (its inputs have gradients, or
  /// its window lies on its output).
  bool halo_backward(size_t node) const;
  /// Seconds packing and unpacking one direction of `plan`'s messages in `type` takes.
  double halo_copy_seconds(const parallel::HaloPlan& plan, ElementType type) const;
  /// The share of node `i`'s forward outputs computed while its forward halos travel under
  /// `d`, `plan` being the busiest rank's halo exchange; 0 when the layer exchanges first.
  /// HaloOverlappedConv::pays_off on the op of the haloed block, under options().halo_overlap:
  /// by default a convolution whose halos run along one axis with every axis outside it one
  /// wide (a depth split in 3-D), at least half its outputs interior and enough work;
  /// "always": any interior; false: none. No channel split.
  double overlapped_share(size_t i, const parallel::Distribution& d, const parallel::HaloPlan& plan) const;
  /// Bytes of node `i`'s model state one rank holds under `d`: its parameters (its shard) with
  /// the optimizer's values for them, and its buffers, in fp32 (what LTFB hands a partner).
  double state_bytes(size_t i, const parallel::Distribution& d) const;
  /// Bytes of node `node`'s gradients one rank sums over its replicas under `d` (in the
  /// gradient precision).
  double gradient_bytes(size_t node, const parallel::Distribution& d) const;
  /// How input `k` of node `consumer` moves from `from` to `to` (edge_cost prices it).
  EdgeMove edge_move(size_t consumer, size_t k, const parallel::Distribution& from,
                     const parallel::Distribution& to) const;
  /// The cost of moving input `k` of node `consumer` from its producer's distribution `from`
  /// to `to`: a redistribution (forward and backward) and its buffers when they differ; the
  /// producer's output when the producer's memory is carried by the edge (a convolution that
  /// fuses with its max pool stores no output when both run alike without a spatial split, and
  /// the fused layer's measured time replaces the two layers').
  EdgeCost edge_cost(size_t consumer, size_t k, const parallel::Distribution& from,
                     const parallel::Distribution& to) const;
  /// Why input `k` of node `consumer` cannot move from `from` to `to` (features, which a
  /// spatial group holds as copies, move only between sample and channel splits); empty when
  /// it can. edge_cost gives such an edge kRefusedSeconds.
  std::optional<std::string> edge_refusal(size_t consumer, size_t k, const parallel::Distribution& from,
                                          const parallel::Distribution& to) const;
  /// Whether the max pool `consumer` runs fused with the convolution it reads under these
  /// distributions (so edge_cost's time holds fusion_seconds).
  bool fuses(size_t consumer, const parallel::Distribution& from, const parallel::Distribution& to) const;
  /// The fused layer's time less the two layers' (negative when fusing is faster).
  double fusion_seconds(size_t pool, const parallel::Distribution& d) const;
  /// Bytes every rank holds beside the layers when the model input is read under `input`: the
  /// process, the batches of input and targets in flight and the stored samples.
  double base_memory(const parallel::Distribution& input) const;

 private:
  double output_bytes(size_t node, const parallel::Distribution& d) const;
  /// The halo exchange of `plan` in `type`, forward and, with `backward`, backward: time,
  /// bytes, buffers.
  /// `hideable`: forward compute the forward messages can travel behind (overlapped_share).
  void add_halo(LayerCost& c, const parallel::HaloPlan& plan, bool backward, ElementType type, double hideable) const;
  static double halo_bytes_sent(const parallel::HaloPlan& plan, bool backward, ElementType type = ElementType::fp32);
  /// Sums over the spatial group: statistics, and features gathered or pooled from the blocks.
  void add_spatial_reductions(std::vector<LayerExchange>& out, const PlanNode& n, const parallel::Distribution& d,
                              const Shape& block) const;
  /// All-gathers and reduce-scatters inside the channel group.
  void add_channel_exchange(std::vector<LayerExchange>& out, const PlanNode& n, const parallel::Distribution& d,
                            const LocalWork& work, const Shape& block) const;
  /// The buffers of the channel group's exchanges.
  double channel_exchange_memory(const PlanNode& n, const parallel::Distribution& d, const Shape& block) const;
  /// The gradient allreduce, optimizer update and memory of node `n`'s parameters under `d`.
  void add_parameters(LayerCost& c, const PlanNode& n, const parallel::Distribution& d) const;
  /// What node `node` computes on one rank under `d` (its blocks; whole inputs and a share of
  /// the filters under a filter split).
  LocalWork local_work(size_t node, const parallel::Distribution& d) const;
  /// The layer's measured times at every rank's speed 1 on the largest even block.
  LayerTime unscaled_time(size_t i, const parallel::Distribution& d);
  /// layer_cost at every rank's speed 1 and the largest even block.
  LayerCost unscaled_layer_cost(size_t i, const parallel::Distribution& d);
  double seconds(Collective c, int64_t ranks, double bytes) const;
  const PlanGraph& graph_;
  const MachineProfile& profile_;
  LayerTimer& timer_;
  CostOptions options_;
  double gradient_bytes_total_ = 0;  // every layer's gradients, whole, in the gradient precision
};

}  // namespace tessera::plan
