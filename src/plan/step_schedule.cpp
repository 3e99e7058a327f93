#include "tessera/plan/step_schedule.hpp"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <map>
#include <ostream>
#include <tuple>

#include "tessera/core/error.hpp"
#include "tessera/model/graph.hpp"
#include "plan_setup.hpp"

namespace tessera::plan {
namespace {

/// A rank's place under a distribution, as ProcessGrid numbers ranks: channel index fastest,
/// then width, height, depth, and the sample group slowest.
struct GridPlace {
  int sample = 0, spatial = 0, channel = 0;
  std::array<int, 3> spatial_index{0, 0, 0};
};

GridPlace place_of(int rank, const parallel::Distribution& d) {
  const int cp = d.channel_parts(), spatial = d.depth * d.height * d.width;
  GridPlace p;
  p.channel = rank % cp;
  p.spatial = rank / cp % spatial;
  p.sample = rank / cp / spatial;
  p.spatial_index = {p.spatial / (d.height * d.width), p.spatial / d.width % d.height, p.spatial % d.width};
  return p;
}

int spatial_count(const parallel::Distribution& d) { return d.depth * d.height * d.width; }

ScheduleOp::Kind kind_of(Collective c) {
  switch (c) {
    case Collective::allreduce: return ScheduleOp::Kind::allreduce;
    case Collective::allgather: return ScheduleOp::Kind::allgather;
    case Collective::reduce_scatter: return ScheduleOp::Kind::reduce_scatter;
    case Collective::alltoall: return ScheduleOp::Kind::alltoall;
    case Collective::point_to_point: break;
  }
  throw Error("internal: a layer exchange priced as point to point");
}

ScheduleOp compute(int layer, double seconds) {
  ScheduleOp op;
  op.layer = layer;
  op.seconds = std::max(0.0, seconds);
  return op;
}

ScheduleOp collective(ScheduleOp::Kind kind, int layer, const RankGroup& group, double bytes) {
  ScheduleOp op;
  op.kind = kind;
  op.layer = layer;
  op.group = group;
  op.bytes = bytes;
  return op;
}

const char* op_code(ScheduleOp::Kind k) {
  switch (k) {
    case ScheduleOp::Kind::compute: return "c";
    case ScheduleOp::Kind::exchange: return "x";
    case ScheduleOp::Kind::allreduce: return "ar";
    case ScheduleOp::Kind::allreduce_start: return "iar";
    case ScheduleOp::Kind::wait_all: return "wa";
    case ScheduleOp::Kind::allgather: return "ag";
    case ScheduleOp::Kind::reduce_scatter: return "rs";
    case ScheduleOp::Kind::alltoall: return "a2a";
  }
  return "?";
}

}  // namespace

StepSchedule::StepSchedule(LayerCostModel& costs, const LayoutPrediction& layout, double bucket_bytes,
                           int64_t ranks_per_node)
    : ranks_(costs.options().ranks),
      ranks_per_node_(ranks_per_node),
      bucket_bytes_(bucket_bytes),
      predicted_(layout.step_time),
      label_(layout.label) {
  const PlanGraph& g = costs.graph();
  if (!layout.valid || layout.layers.size() != g.nodes.size())
    throw Error("internal: a step schedule needs a valid layout of the planned graph");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const PlanNode& n = g.nodes[i];
    const PlannedLayer& planned = layout.layers[i];
    Layer l;
    l.name = n.name;
    l.distribution = planned.distribution;
    l.precision = n.precision;
    const LayerTime t = costs.compute_time(i, l.distribution);
    l.forward = t.forward + planned.fusion;  // a fused pool's saving (negative) is its forward's
    l.backward = t.backward;
    l.communication_inside = costs.measures_communication(l.distribution);
    if (!l.communication_inside) {
      l.exchanges = costs.exchanges(i, l.distribution);
      if (l.distribution.is_spatial() && n.window) {
        const parallel::Distribution& d = l.distribution;
        for (int s = 0; s < spatial_count(d); ++s)
          l.halos.push_back(costs.halo_plan(i, d, place_of(s * d.channel_parts(), d).spatial_index));
        if (l.halos.front()) {
          const auto busiest = costs.halo_plan(i, d);
          l.halo_copy_seconds = costs.halo_copy_seconds(*busiest, n.precision);
          l.interior_share = costs.overlapped_share(i, d, *busiest);
        }
      }
    }
    state_bytes_ += costs.state_bytes(i, l.distribution);
    l.halo_backward = costs.halo_backward(i);
    l.gradient_bytes = costs.gradient_bytes(i, l.distribution);
    l.update = planned.cost.update;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int in = n.inputs[k];
      const parallel::Distribution& from =
          in == model::Graph::kModelInput ? layout.layers.front().distribution : layout.layers[static_cast<size_t>(in)].distribution;
      const EdgeMove m = costs.edge_move(i, k, from, l.distribution);
      if (m.kind == EdgeMove::Kind::copy) {
        // The tensor forward, its gradient backward (the model input has none).
        const double share = in == model::Graph::kModelInput ? 1.0 : 0.5;
        l.forward += share * m.copy_seconds;
        l.backward += (1 - share) * m.copy_seconds;
      } else if (m.kind == EdgeMove::Kind::alltoall) {
        l.moves.emplace_back(in, m);
      }
    }
    layers_.push_back(std::move(l));
  }
}

RankGroup StepSchedule::group_of(int rank, const parallel::Distribution& d, ExchangeGroup g) const {
  const GridPlace p = place_of(rank, d);
  const int cp = d.channel_parts(), spatial = spatial_count(d);
  const int block_base = (p.sample * spatial + p.spatial) * cp;  // the first rank of this channel group
  switch (g) {
    case ExchangeGroup::spatial: return {p.sample * spatial * cp + p.channel, cp, spatial};
    case ExchangeGroup::channel: return {block_base, 1, cp};
    case ExchangeGroup::channel_row: return {block_base + p.channel / d.filter * d.filter, 1, d.filter};
    case ExchangeGroup::channel_column: return {block_base + p.channel % d.filter, d.filter, d.channel};
    case ExchangeGroup::replicas: return {p.channel, cp, ranks_ / cp};
  }
  throw Error("internal: unknown exchange group");
}

RankGroup StepSchedule::move_group(int rank, int64_t peers) const {
  // Consecutive ranks: those whose blocks overlap where the sample is split outermost. A count
  // that does not divide the ranks moves among all of them.
  if (peers <= 1 || ranks_ % peers != 0) return {0, 1, ranks_};
  const int p = static_cast<int>(peers);
  return {rank / p * p, 1, p};
}

double StepSchedule::add_halo(std::vector<ScheduleOp>& ops, int rank, int layer, bool backward) const {
  const Layer& l = layers_[static_cast<size_t>(layer)];
  if (l.halos.empty()) return 0.0;
  const GridPlace p = place_of(rank, l.distribution);
  const auto& plan = l.halos[static_cast<size_t>(p.spatial)];
  if (!plan) return 0.0;
  const int cp = l.distribution.channel_parts(), spatial = spatial_count(l.distribution);
  const double element = static_cast<double>(element_size(l.precision));
  ScheduleOp x;
  x.kind = ScheduleOp::Kind::exchange;
  x.layer = layer;
  // Forward this rank sends the boxes of its block that neighbours need; backward it sends the
  // gradients that fell into its halo regions back to their owners.
  const auto rank_of = [&](int peer) { return (p.sample * spatial + peer) * cp + p.channel; };
  for (const auto& box : backward ? plan->receives() : plan->sends())
    x.sends.emplace_back(rank_of(box.peer), static_cast<double>(box.count()) * element);
  for (const auto& box : backward ? plan->sends() : plan->receives()) x.receives.push_back(rank_of(box.peer));
  if (x.sends.empty() && x.receives.empty()) return 0.0;
  // Forward, an overlapping convolution computes its interior while the halos travel (the
  // busiest rank's share on every rank, as the compute is the busiest rank's).
  if (!backward) x.seconds = l.interior_share * l.forward;
  ops.push_back(compute(layer, l.halo_copy_seconds / 2));  // packing
  const double overlapped = x.seconds;
  ops.push_back(std::move(x));
  ops.push_back(compute(layer, l.halo_copy_seconds / 2));  // unpacking
  return overlapped;
}

void StepSchedule::add_exchange(std::vector<ScheduleOp>& ops, int rank, int layer, const LayerExchange& e) const {
  const Layer& l = layers_[static_cast<size_t>(layer)];
  ops.push_back(collective(kind_of(e.collective), layer, group_of(rank, l.distribution, e.group), e.bytes));
}

std::vector<ScheduleOp> StepSchedule::rank_ops(int rank) const {
  if (rank < 0 || rank >= ranks_) throw Error("internal: rank " + std::to_string(rank) + " outside the schedule");
  std::vector<ScheduleOp> ops;
  const int count = static_cast<int>(layers_.size());
  for (int i = 0; i < count; ++i) {
    const Layer& l = layers_[static_cast<size_t>(i)];
    for (const auto& [producer, m] : l.moves)
      ops.push_back(collective(ScheduleOp::Kind::alltoall, i, move_group(rank, m.peers), m.forward_bytes));
    for (const auto& e : l.exchanges)  // gathers that must precede the compute (weight shards)
      if (e.pass == Pass::forward && e.part == LayerExchange::Part::weight_shards) add_exchange(ops, rank, i, e);
    const double overlapped = add_halo(ops, rank, i, false);
    ops.push_back(compute(i, l.forward - overlapped));
    for (const auto& e : l.exchanges)
      if (e.pass == Pass::forward && e.part != LayerExchange::Part::weight_shards) add_exchange(ops, rank, i, e);
  }
  // Backward, with the gradient buckets of each replica group started as the reducer starts
  // them: a bucket holds whole layers' gradients up to bucket_bytes_ (or one larger layer) and
  // starts once backprop has passed all of it.
  std::map<std::tuple<int, int, int>, double> pending;  // per group: bytes not started yet
  const auto start = [&](const RankGroup& g, double& bytes, int layer) {
    if (bytes <= 0) return;
    ops.push_back(collective(ScheduleOp::Kind::allreduce_start, layer, g, bytes));
    bytes = 0;
  };
  for (int i = count - 1; i >= 0; --i) {
    const Layer& l = layers_[static_cast<size_t>(i)];
    const RankGroup replicas = group_of(rank, l.distribution, ExchangeGroup::replicas);
    double& waiting = pending[{replicas.first, replicas.stride, replicas.count}];
    if (l.gradient_bytes > 0 && waiting > 0 && waiting + l.gradient_bytes > bucket_bytes_) start(replicas, waiting, i);
    for (const auto& e : l.exchanges)  // gradients gathered before the layer's backward
      if (e.pass == Pass::backward && e.collective == Collective::allgather) add_exchange(ops, rank, i, e);
    ops.push_back(compute(i, l.backward));
    for (const auto& e : l.exchanges)
      if (e.pass == Pass::backward && e.collective != Collective::allgather) add_exchange(ops, rank, i, e);
    if (l.halo_backward) add_halo(ops, rank, i, true);
    for (const auto& [producer, m] : l.moves)
      if (m.backward_bytes > 0)
        ops.push_back(collective(ScheduleOp::Kind::alltoall, i, move_group(rank, m.peers), m.backward_bytes));
    if (l.gradient_bytes > 0 && replicas.count > 1) waiting += l.gradient_bytes;
  }
  for (auto& [key, bytes] : pending)
    start({std::get<0>(key), std::get<1>(key), std::get<2>(key)}, bytes, 0);
  ScheduleOp wait;
  wait.kind = ScheduleOp::Kind::wait_all;
  ops.push_back(wait);
  double update = 0;
  for (const auto& l : layers_) update += l.update;
  ops.push_back(compute(-1, update));
  return ops;
}

void write_schedule_header(std::ostream& out, const ScheduleHeader& header) {
  out << "tessera-step-schedule 1\n"
      << "ranks " << header.ranks << "\n"
      << "ranks_per_node " << header.ranks_per_node << "\n"
      << std::setprecision(9);
  if (header.predicted_seconds > 0 || header.measured_seconds <= 0)
    out << "predicted_step_seconds " << header.predicted_seconds << "\n";
  if (header.measured_seconds > 0) out << "measured_step_seconds " << header.measured_seconds << "\n";
  out << "label " << header.label << "\n";
  // A layer's name is one word of the file: a redistribution's node is named like
  // "pool2->{sample 2}".
  for (size_t i = 0; i < header.layers.size(); ++i) {
    std::string name = header.layers[i];
    std::replace_if(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) != 0; }, '_');
    out << "layer " << i << " " << name << "\n";
  }
}

void write_schedule_op(std::ostream& out, const ScheduleOp& op) {
  // An exchange that computes while its messages travel is "xo", with those seconds.
  const bool overlapped = op.kind == ScheduleOp::Kind::exchange && op.seconds > 0;
  out << std::setprecision(9) << (overlapped ? "xo" : op_code(op.kind)) << " " << op.layer;
  switch (op.kind) {
    case ScheduleOp::Kind::compute:
      out << " " << op.seconds;
      break;
    case ScheduleOp::Kind::exchange:
      if (op.seconds > 0) out << " " << op.seconds;
      out << " " << op.sends.size();
      for (const auto& [peer, bytes] : op.sends) out << " " << peer << " " << bytes;
      out << " " << op.receives.size();
      for (const int peer : op.receives) out << " " << peer;
      break;
    case ScheduleOp::Kind::wait_all:
      break;
    default:
      out << " " << op.group.first << " " << op.group.stride << " " << op.group.count << " " << op.bytes;
  }
  out << "\n";
}

void write_schedule(std::ostream& out, const ScheduleHeader& header,
                    const std::function<std::vector<ScheduleOp>(int)>& rank_ops) {
  write_schedule_header(out, header);
  for (int r = 0; r < header.ranks; ++r) {
    out << "rank " << r << "\n";
    for (const ScheduleOp& op : rank_ops(r)) write_schedule_op(out, op);
  }
  out << "end\n";
}

ScheduleHeader StepSchedule::header() const {
  ScheduleHeader h;
  h.ranks = ranks_;
  h.ranks_per_node = ranks_per_node_;
  h.predicted_seconds = predicted_;
  h.label = label_;
  for (const auto& l : layers_) h.layers.push_back(l.name);
  return h;
}

double StepSchedule::forward_seconds() const {
  double s = 0;
  for (const auto& l : layers_) s += l.forward;
  return s;
}

void StepSchedule::write(std::ostream& out) const {
  write_schedule(out, header(), [this](int r) { return rank_ops(r); });
}

StepSchedule schedule_layout(const model::ModelSpec& spec, const PlanRequest& request, MachineProfile& profile,
                             const LayoutPrediction& layout, double bucket_bytes) {
  PlanSetup s(spec, request, profile);
  return StepSchedule(s.costs, layout, bucket_bytes, std::max<int64_t>(1, profile.ranks_per_node));
}

}  // namespace tessera::plan
