#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::parallel {

/// The batch job a run is part of, as its scheduler's environment describes it: today Slurm's
/// SLURM_* variables (sbatch/salloc set the job's, srun the step's). The run header and the
/// metrics log's start record name it, so that a log found later says which job, step, nodes
/// and requeue wrote it (docs/slurm.md).
struct BatchJob {
  std::string scheduler;                  // "slurm"
  std::string job_id, step_id;            // SLURM_JOB_ID, SLURM_STEP_ID ("" in the batch script)
  std::string array_job_id, array_task_id;  // a job array's id and this task's index, or ""
  std::string node_list;                  // the step's nodes (or the job's), Slurm's compact form
  std::string tasks_per_node;             // as Slurm writes it: "2" or "2(x3),1"
  int64_t nodes = 0, tasks = 0;
  int64_t cpus_per_task = 0;  // SLURM_CPUS_PER_TASK, 0 when the job did not set --cpus-per-task
  int64_t restarts = 0;       // SLURM_RESTART_COUNT: how often the job was requeued

  /// The job this process runs in, or nullopt outside one. `variable` reads the environment
  /// (a parameter so tests can give their own). Values that are not numbers where numbers
  /// are expected are left out, not trusted.
  static std::optional<BatchJob> from_environment(
      const std::function<std::optional<std::string>(const char*)>& variable = nullptr);

  /// "slurm job 42.0 (array 41_3), requeued 1 time, 2 node(s) ts-node[0-1], tasks per node 1"
  std::string describe() const;
  nlohmann::json to_json() const;
};

/// A warning naming both counts when the job gave each task `cpus_per_task` CPUs and the run
/// uses another number of threads (an oversubscribed or idle share of the node); "" otherwise.
std::string thread_count_warning(const BatchJob& job, int threads);

}  // namespace tessera::parallel
