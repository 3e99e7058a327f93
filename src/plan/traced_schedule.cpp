#include "tessera/plan/traced_schedule.hpp"

#include <algorithm>
#include <sstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/statistics.hpp"

namespace tessera::plan {
namespace {

using parallel::TracedOp;

ScheduleOp::Kind schedule_kind(TracedOp::Kind kind) {
  switch (kind) {
    case TracedOp::Kind::compute: return ScheduleOp::Kind::compute;
    case TracedOp::Kind::exchange: return ScheduleOp::Kind::exchange;
    case TracedOp::Kind::allreduce: return ScheduleOp::Kind::allreduce;
    case TracedOp::Kind::allreduce_start: return ScheduleOp::Kind::allreduce_start;
    case TracedOp::Kind::wait_all: return ScheduleOp::Kind::wait_all;
    case TracedOp::Kind::allgather: return ScheduleOp::Kind::allgather;
    case TracedOp::Kind::reduce_scatter: return ScheduleOp::Kind::reduce_scatter;
    case TracedOp::Kind::alltoall: return ScheduleOp::Kind::alltoall;
  }
  return ScheduleOp::Kind::compute;
}

ScheduleOp schedule_op(const TracedOp& t) {
  ScheduleOp op;
  op.kind = schedule_kind(t.kind);
  op.layer = t.layer;
  op.seconds = t.seconds;
  op.bytes = t.bytes;
  op.group = RankGroup{t.first, t.stride, t.count};
  op.sends = t.sends;
  op.receives = t.receives;
  return op;
}

/// The same operation apart from its time.
bool same_operation(const TracedOp& a, const TracedOp& b) {
  return a.kind == b.kind && a.layer == b.layer && a.bytes == b.bytes && a.first == b.first && a.stride == b.stride &&
         a.count == b.count && a.sends == b.sends && a.receives == b.receives;
}

bool same_operations(const std::vector<TracedOp>& a, const std::vector<TracedOp>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same_operation);
}

/// Rank 0's part of write_traced_schedule: receives the other ranks' lines and writes the file.
void write_gathered(const std::string& path, ScheduleHeader header, const TraceSummary& summary, const std::string& text,
                    const std::vector<double>& lengths, const parallel::Communicator& ranks, int tag) {
  header.ranks = ranks.size();
  header.measured_seconds = summary.step_seconds;
  std::ostringstream out;
  write_schedule_header(out, header);
  for (int r = 0; r < ranks.size(); ++r) {
    out << "rank " << r << "\n";
    if (r == 0) {
      out << text;
      continue;
    }
    std::string theirs(static_cast<size_t>(lengths[static_cast<size_t>(r)]), '\0');
    if (!theirs.empty()) ranks.recv_bytes(theirs.data(), static_cast<int64_t>(theirs.size()), r, tag);
    out << theirs;
  }
  out << "end\n";
  write_text_atomically(path, out.str());
}

}  // namespace

std::vector<ScheduleOp> traced_step(const parallel::TracedSteps& steps, const parallel::Communicator& ranks,
                                    TraceSummary& summary) {
  double fewer = -static_cast<double>(steps.steps.size());
  ranks.allreduce_max(&fewer, 1);
  // Ranks record the same steps; should one have more, only those all of them have are used.
  const int fewest = static_cast<int>(-fewer);
  if (fewest == 0)
    throw Error("the trace recorded no complete step on some rank: the run ended before the steps it was to "
                "record (see --trace-skip and --trace-steps)");
  const auto n = static_cast<size_t>(fewest);
  bool uniform = true;
  for (size_t k = 1; k < n && uniform; ++k) uniform = same_operations(steps.steps[k], steps.steps[0]);
  double disagree = uniform ? 0.0 : 1.0;
  ranks.allreduce_max(&disagree, 1);
  std::vector<double> slowest(steps.seconds.begin(), steps.seconds.begin() + static_cast<std::ptrdiff_t>(n));
  ranks.allreduce_max(slowest.data(), static_cast<int64_t>(n));

  summary.steps = fewest;
  summary.op_medians = disagree == 0.0;
  std::vector<ScheduleOp> ops;
  if (summary.op_medians) {
    summary.step_seconds = median(slowest);
    for (size_t i = 0; i < steps.steps[0].size(); ++i) {
      std::vector<double> times;
      for (size_t k = 0; k < n; ++k) times.push_back(steps.steps[k][i].seconds);
      ScheduleOp op = schedule_op(steps.steps[0][i]);
      op.seconds = median(times);
      ops.push_back(std::move(op));
    }
    return ops;
  }
  std::vector<size_t> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return slowest[a] < slowest[b]; });
  const size_t chosen = order[n / 2];
  summary.step_seconds = slowest[chosen];
  for (const TracedOp& t : steps.steps[chosen]) ops.push_back(schedule_op(t));
  return ops;
}

TraceSummary write_traced_schedule(const std::string& path, const parallel::TracedSteps& steps, ScheduleHeader header,
                                   const parallel::Communicator& ranks) {
  TraceSummary summary;
  const std::vector<ScheduleOp> ops = traced_step(steps, ranks, summary);
  std::ostringstream mine;
  for (const ScheduleOp& op : ops) write_schedule_op(mine, op);
  double count = static_cast<double>(ops.size());
  ranks.allreduce_sum(&count, 1);
  summary.operations = static_cast<int64_t>(count);
  const std::string text = mine.str();
  // Each rank's lines to rank 0, which writes them in rank order.
  const std::vector<double> lengths = ranks.allgather(static_cast<double>(text.size()));
  constexpr int kTag = 7301;
  std::string failure;
  if (ranks.rank() != 0) {
    if (!text.empty()) ranks.send_bytes(text.data(), static_cast<int64_t>(text.size()), 0, kTag);
  } else {
    try {
      write_gathered(path, header, summary, text, lengths, ranks, kTag);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  // Every rank ends alike: a file rank 0 could not write fails the command everywhere.
  double failed = failure.empty() ? 0.0 : 1.0;
  ranks.allreduce_max(&failed, 1);
  if (failed != 0.0) throw Error(failure.empty() ? "rank 0 could not write the trace " + path : failure);
  return summary;
}

}  // namespace tessera::plan
