#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/mpi_trace.hpp"
#include "tessera/plan/step_schedule.hpp"

namespace tessera::plan {

/// What the file of a traced run holds, for its summary line.
struct TraceSummary {
  int steps = 0;              // steps recorded on every rank
  bool op_medians = false;    // every step had the same operations: each one's median seconds
  double step_seconds = 0;    // the slowest rank's median step (the header's measured_step_seconds)
  int64_t operations = 0;     // on all ranks
};

/// A step as this rank ran it, from the steps a trace recorded: when every recorded step on
/// every rank made the same operations (kinds, layers, peers, groups, bytes), each operation
/// with its median seconds over them; otherwise the step whose slowest rank took the median
/// time, as it ran. Collective over `ranks` (the traced job).
std::vector<ScheduleOp> traced_step(const parallel::TracedSteps& steps, const parallel::Communicator& ranks,
                                    TraceSummary& summary);

/// Writes the schedule file of a traced run (docs/simulation.md, "A real run's trace"): every
/// rank's traced_step, the header's measured_step_seconds the slowest rank's median step.
/// Collective over `ranks`, which must be the whole job (the schedule numbers ranks in it);
/// rank 0 writes `path` atomically. Throws, on every rank, when a rank recorded no step.
TraceSummary write_traced_schedule(const std::string& path, const parallel::TracedSteps& steps, ScheduleHeader header,
                                   const parallel::Communicator& ranks);

}  // namespace tessera::plan
