#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/plan/layer_cost.hpp"
#include "tessera/plan/layout_planner.hpp"

namespace tessera::plan {

/// Ranks first, first + stride, ..., `count` of them: every group a layout forms (a sample's
/// spatial ranks, a channel group or its rows and columns, the replicas of a parameter) is one,
/// with ranks numbered as parallel::ProcessGrid numbers them.
struct RankGroup {
  int first = 0, stride = 1, count = 1;
  bool operator==(const RankGroup& o) const { return first == o.first && stride == o.stride && count == o.count; }
};

/// One operation of one rank's training step (docs/simulation.md, "The schedule file").
struct ScheduleOp {
  enum class Kind { compute, exchange, allreduce, allreduce_start, wait_all, allgather, reduce_scatter, alltoall };
  Kind kind = Kind::compute;
  int layer = -1;       // the graph node it belongs to; -1: the step's own (optimizer, last wait)
  double seconds = 0;   // compute; exchange: compute done while its messages travel (overlap)
  double bytes = 0;     // collectives: n as LinkCost defines it
  RankGroup group;      // collectives
  std::vector<std::pair<int, double>> sends;  // exchange: (peer rank, bytes sent to it)
  std::vector<int> receives;                   // exchange: the ranks it receives from
};

/// What a schedule file states before its ranks' operations.
struct ScheduleHeader {
  int ranks = 1;
  int64_t ranks_per_node = 1;
  double predicted_seconds = 0;  // the planner's figure for what the schedule holds
  double measured_seconds = 0;   // a traced run's step (tessera train --trace); 0: none
  std::string label;
  std::vector<std::string> layers;
};

/// Writes a schedule file (docs/simulation.md): the header, then rank_ops(r) for every rank.
void write_schedule(std::ostream& out, const ScheduleHeader& header,
                    const std::function<std::vector<ScheduleOp>(int)>& rank_ops);
/// The parts of a schedule file: its header (through the layer names), and one operation's line.
void write_schedule_header(std::ostream& out, const ScheduleHeader& header);
void write_schedule_op(std::ostream& out, const ScheduleOp& op);

/// A training step of one layout as every rank runs it, for the simulator (tessera-sim): per
/// rank, in order, its compute phases (the cost model's measured or roofline layer times), its
/// halo messages with their peers and bytes, the collectives of its layers over their groups,
/// its redistributions, and its gradient buckets, started behind the backward pass as the
/// gradient reducer starts them and waited for before the optimizer step.
///
/// Built from the same graph, layer times and byte counts as the cost model's prediction, so a
/// schedule of 8192 ranks exists without running them; where the two differ is what the
/// simulator adds: the network's topology and contention, the collectives' real algorithms,
/// and the overlap of the gradient sums with backward, which the planner does not credit.
///
/// What it simplifies: every rank computes as long as the slowest sample group (the
/// planner's figure); blocks are the largest even block; a redistribution is an all-to-all
/// among consecutive ranks (those whose blocks overlap when the sample is the outermost split);
/// layers whose times were measured split over ranks carry their communication inside their
/// compute. A convolution that overlaps its forward halo exchange at run time
/// (LayerCostModel::overlapped_share) computes its interior share of the forward pass while its
/// messages travel, the rest after; the extra cost of its pieces, and OverlapChoice's
/// measurement, are not modelled.
class StepSchedule {
 public:
  /// `layout`: a valid prediction over `costs`' graph; `bucket_bytes`: the gradient reducer's
  /// bucket in the gradient precision ("training.allreduce_bucket_kb").
  StepSchedule(LayerCostModel& costs, const LayoutPrediction& layout, double bucket_bytes, int64_t ranks_per_node);

  int ranks() const { return ranks_; }
  /// Rank `rank`'s operations, in order.
  std::vector<ScheduleOp> rank_ops(int rank) const;
  /// Writes the schedule file (every rank's operations).
  void write(std::ostream& out) const;
  ScheduleHeader header() const;
  /// The forward pass's compute on the busiest rank (every layer's, fusion and copies included).
  double forward_seconds() const;
  /// Bytes of one rank's block of the model state a trainer hands another (its parameters and
  /// the optimizer's values for them, and its buffers), as LTFB exchanges them.
  double state_bytes() const { return state_bytes_; }

 private:
  struct Layer {
    std::string name;
    parallel::Distribution distribution;
    double forward = 0, backward = 0;  // compute seconds, fusion and edge copies included
    bool communication_inside = false;   // measured split over ranks
    std::vector<LayerExchange> exchanges;
    std::vector<std::pair<int, EdgeMove>> moves;  // (producer's layer or -1, move) per input
    std::vector<std::optional<parallel::HaloPlan>> halos;  // per spatial index
    ElementType precision = ElementType::fp32;
    bool halo_backward = false;
    double halo_copy_seconds = 0;  // one direction, the busiest rank's
    double interior_share = 0;     // of the forward compute, done during the forward exchange
    double gradient_bytes = 0;
    double update = 0;
  };
  RankGroup group_of(int rank, const parallel::Distribution& d, ExchangeGroup g) const;
  RankGroup move_group(int rank, int64_t peers) const;
  /// Returns the compute the exchange's `seconds` took over (the overlapped interior).
  double add_halo(std::vector<ScheduleOp>& ops, int rank, int layer, bool backward) const;
  void add_exchange(std::vector<ScheduleOp>& ops, int rank, int layer, const LayerExchange& e) const;

  int ranks_ = 1;
  int64_t ranks_per_node_ = 1;
  double bucket_bytes_ = 0;
  double predicted_ = 0;
  double state_bytes_ = 0;
  std::string label_;
  std::vector<Layer> layers_;
};

/// The step schedule of `layout`, a prediction plan_model or predict_model made for `spec` on
/// `request.ranks` ranks of `profile`'s machine; `bucket_bytes` as for StepSchedule.
StepSchedule schedule_layout(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile,
                             const LayoutPrediction& layout, double bucket_bytes);

}  // namespace tessera::plan
