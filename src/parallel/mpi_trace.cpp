#include "tessera/parallel/mpi_trace.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::parallel {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// What a trace holds while it records; touched only by the recording thread once `active`
/// is set (the wrappers of other threads stop at recording_here()).
struct TraceState {
  std::atomic<bool> active{false};
  std::thread::id owner;
  MpiTrace::Options options;
  std::map<std::string, int> layer_index;
  int64_t steps_seen = 0;
  bool in_window = false;
  std::vector<int> layers;  // the open regions' layers, innermost last
  Clock::time_point step_start, segment_start;
  std::vector<TracedOp> ops;
  int bucket_depth = 0;  // inside a "gradient_bucket" region: messages there are a gradient sum
  bool exchange_open = false;
  TracedOp exchange;
  std::set<const MPI_Request*> exchange_requests, bucket_requests;
  TracedSteps kept;
  std::string refused;  // the first operation that could not be written

  int layer() const { return layers.empty() ? -1 : layers.back(); }
};

TraceState& state() {
  static TraceState s;
  return s;
}

/// Ends the compute running since the last event: it belongs to the open exchange (computed
/// while its messages travel) or is a compute operation of the current layer.
void close_segment(TraceState& s) {
  const auto now = Clock::now();
  const double dt = seconds_between(s.segment_start, now);
  s.segment_start = now;
  if (dt <= 0) return;
  if (s.exchange_open) {
    s.exchange.seconds += dt;
    return;
  }
  if (!s.ops.empty() && s.ops.back().kind == TracedOp::Kind::compute && s.ops.back().layer == s.layer()) {
    s.ops.back().seconds += dt;
    return;
  }
  TracedOp op;
  op.layer = s.layer();
  op.seconds = dt;
  s.ops.push_back(op);
}

void flush_exchange(TraceState& s) {
  if (!s.exchange_open) return;
  s.ops.push_back(std::move(s.exchange));
  s.exchange = TracedOp{};
  s.exchange_open = false;
  s.exchange_requests.clear();
}

TracedOp& open_exchange(TraceState& s) {
  if (!s.exchange_open) {
    s.exchange = TracedOp{};
    s.exchange.kind = TracedOp::Kind::exchange;
    s.exchange.layer = s.layer();
    s.exchange_open = true;
  }
  return s.exchange;
}

/// The job's numbers of ranks `local` of `comm` (MPI_UNDEFINED for one outside the job's).
std::vector<int> in_world(MPI_Comm comm, const std::vector<int>& local) {
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> global(local.size(), MPI_UNDEFINED);
  PMPI_Group_translate_ranks(group, static_cast<int>(local.size()), local.data(), world, global.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return global;
}

std::vector<int> world_ranks(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::vector<int> local(static_cast<size_t>(size));
  for (int k = 0; k < size; ++k) local[static_cast<size_t>(k)] = k;
  return in_world(comm, local);
}

/// `rank` of `comm` in the job; -1 for MPI_PROC_NULL.
int world_rank(MPI_Comm comm, int rank) {
  if (rank == MPI_PROC_NULL || rank < 0) return -1;
  const int global = in_world(comm, {rank})[0];
  return global == MPI_UNDEFINED ? -1 : global;
}

/// The collective `kind` over `comm` as an operation, or nothing for a group of one (it moves
/// nothing) or a group the schedule format cannot write (noted for finish()).
std::optional<TracedOp> group_op(TraceState& s, TracedOp::Kind kind, MPI_Comm comm, double bytes) {
  const std::vector<int> ranks = world_ranks(comm);
  if (ranks.size() < 2) return std::nullopt;
  TracedOp op;
  op.kind = kind;
  op.layer = s.layer();
  op.bytes = bytes;
  op.first = ranks[0];
  op.stride = ranks[1] - ranks[0];
  op.count = static_cast<int>(ranks.size());
  bool strided = op.stride > 0;
  for (size_t k = 1; k < ranks.size() && strided; ++k) strided = ranks[k] - ranks[k - 1] == op.stride;
  if (!strided) {
    if (s.refused.empty()) {
      std::string list;
      for (size_t k = 0; k < ranks.size() && k < 8; ++k) list += (k ? ", " : "") + std::to_string(ranks[k]);
      s.refused = "a collective over the ranks " + list + (ranks.size() > 8 ? ", ..." : "") +
                  ", which are not evenly spaced: a schedule names a group by its first rank, stride and count";
    }
    return std::nullopt;
  }
  return op;
}

void begin_step(TraceState& s) {
  const int64_t index = s.steps_seen++;
  s.in_window = index >= s.options.skip_steps && index < s.options.skip_steps + s.options.steps;
  if (!s.in_window) return;
  Kokkos::fence();
  s.ops.clear();
  s.exchange_open = false;
  s.exchange_requests.clear();
  s.bucket_requests.clear();
  s.step_start = s.segment_start = Clock::now();
}

void end_step(TraceState& s) {
  if (!s.in_window) return;
  Kokkos::fence();
  close_segment(s);
  flush_exchange(s);
  const auto now = Clock::now();
  s.kept.steps.push_back(std::move(s.ops));
  s.kept.seconds.push_back(seconds_between(s.step_start, now));
  s.ops.clear();
  s.in_window = false;
}

bool is_layer_region(const std::string& name, std::string& layer) {
  for (const char* prefix : {"forward/", "backward/"}) {
    const std::string p(prefix);
    if (name.compare(0, p.size(), p) == 0) {
      layer = name.substr(p.size());
      return true;
    }
  }
  return false;
}

void on_region(const std::string& name, bool open) {
  TraceState& s = state();
  if (!s.active.load(std::memory_order_acquire) || std::this_thread::get_id() != s.owner) return;
  if (name == "step") {
    if (open) {
      begin_step(s);
      s.layers.assign(1, -1);
    } else {
      end_step(s);
      s.layers.clear();
    }
    return;
  }
  if (s.in_window) {
    // Asynchronous kernels (a GPU's) are charged to the region that launched them.
    Kokkos::fence();
    close_segment(s);
  }
  if (name == "gradient_bucket") s.bucket_depth += open ? 1 : -1;
  if (!open) {
    if (!s.layers.empty()) s.layers.pop_back();
    return;
  }
  std::string layer;
  if (is_layer_region(name, layer)) {
    const auto it = s.layer_index.find(layer);
    s.layers.push_back(it == s.layer_index.end() ? -1 : it->second);
  } else if (name == "data" || name == "loss" || name == "optimizer") {
    s.layers.push_back(-1);
  } else {
    s.layers.push_back(s.layer());
  }
}

}  // namespace

void MpiTrace::start(Options options) {
  TraceState& s = state();
  if (s.active.load()) throw Error("an MPI trace is already recording");
  if (options.skip_steps < 0 || options.steps < 1)
    throw Error("an MPI trace records at least one step after zero or more left out");
  s.options = std::move(options);
  s.layer_index.clear();
  for (size_t i = 0; i < s.options.layers.size(); ++i) s.layer_index.emplace(s.options.layers[i], static_cast<int>(i));
  s.steps_seen = 0;
  s.in_window = false;
  s.layers.clear();
  s.bucket_depth = 0;
  s.kept = TracedSteps{};
  s.refused.clear();
  s.owner = std::this_thread::get_id();
  set_region_listener(&on_region);
  s.active.store(true, std::memory_order_release);
}

TracedSteps MpiTrace::finish() {
  TraceState& s = state();
  s.active.store(false, std::memory_order_release);
  set_region_listener(nullptr);
  if (!s.refused.empty()) throw Error("the trace cannot be written as a step schedule: " + s.refused);
  return std::move(s.kept);
}

bool MpiTrace::recording_here() {
  const TraceState& s = state();
  return s.active.load(std::memory_order_acquire) && std::this_thread::get_id() == s.owner && s.in_window;
}

void MpiTrace::before_call() { close_segment(state()); }

void MpiTrace::after_call() { state().segment_start = Clock::now(); }

void MpiTrace::posted_send(const MPI_Request* request, MPI_Comm comm, int peer, double bytes) {
  TraceState& s = state();
  const int global = world_rank(comm, peer);
  if (global < 0) return;
  if (s.bucket_depth > 0) {
    // Two ranks sum a bucket by exchanging it whole (MpiCollectives): a gradient bucket over
    // the pair, as a schedule writes one.
    flush_exchange(s);
    int me = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    TracedOp op;
    op.kind = TracedOp::Kind::allreduce_start;
    op.layer = s.layer();
    op.bytes = bytes;
    op.first = std::min(me, global);
    op.stride = std::max(1, std::abs(global - me));
    op.count = 2;
    s.ops.push_back(op);
    s.bucket_requests.insert(request);
    return;
  }
  open_exchange(s).sends.emplace_back(global, bytes);
  s.exchange_requests.insert(request);
}

void MpiTrace::posted_receive(const MPI_Request* request, MPI_Comm comm, int peer) {
  TraceState& s = state();
  const int global = world_rank(comm, peer);
  if (global < 0) return;
  if (s.bucket_depth > 0) {
    s.bucket_requests.insert(request);
    return;
  }
  open_exchange(s).receives.push_back(global);
  s.exchange_requests.insert(request);
}

void MpiTrace::exchanged(MPI_Comm comm, int send_peer, double send_bytes, int receive_peer) {
  TraceState& s = state();
  flush_exchange(s);
  TracedOp op;
  op.kind = TracedOp::Kind::exchange;
  op.layer = s.layer();
  if (const int to = world_rank(comm, send_peer); to >= 0) op.sends.emplace_back(to, send_bytes);
  if (const int from = world_rank(comm, receive_peer); from >= 0) op.receives.push_back(from);
  if (!op.sends.empty() || !op.receives.empty()) s.ops.push_back(std::move(op));
}

void MpiTrace::waited(const MPI_Request* requests, int count) {
  TraceState& s = state();
  bool exchange = false, buckets = false;
  for (int k = 0; k < count; ++k) {
    exchange = exchange || s.exchange_requests.count(requests + k) > 0;
    buckets = buckets || s.bucket_requests.count(requests + k) > 0;
  }
  // The open exchange ends at a wait on one of its messages, and before a wait for the buckets.
  if (exchange || buckets) flush_exchange(s);
  if (!buckets) return;
  TracedOp op;
  op.kind = TracedOp::Kind::wait_all;
  s.ops.push_back(op);
  s.bucket_requests.clear();
}

void MpiTrace::collective(TracedOp::Kind kind, MPI_Comm comm, double bytes) {
  TraceState& s = state();
  flush_exchange(s);
  if (auto op = group_op(s, kind, comm, bytes)) s.ops.push_back(std::move(*op));
}

void MpiTrace::started_allreduce(const MPI_Request* request, MPI_Comm comm, double bytes) {
  TraceState& s = state();
  flush_exchange(s);
  if (auto op = group_op(s, TracedOp::Kind::allreduce_start, comm, bytes)) {
    s.ops.push_back(std::move(*op));
    s.bucket_requests.insert(request);
  }
}

}  // namespace tessera::parallel
