#include "tessera/parallel/batch_job.hpp"

#include <cstdlib>
#include <limits>

#include "tessera/core/checked_number.hpp"

namespace tessera::parallel {
namespace {

std::optional<std::string> from_process_environment(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace

std::optional<BatchJob> BatchJob::from_environment(
    const std::function<std::optional<std::string>(const char*)>& variable) {
  const auto get = [&](const char* name) {
    const auto v = variable ? variable(name) : from_process_environment(name);
    return v ? *v : std::string();
  };
  // A count, or 0 when absent or not a plain non-negative integer.
  const auto count = [&](const char* name) -> int64_t {
    int64_t v = 0;
    return read_integer(get(name), IntegerBounds{0, std::numeric_limits<int64_t>::max()}, v).empty() ? v : 0;
  };
  // The step's values where srun set them, else the job's: the ranks run in the step.
  const auto step_or_job = [&](const char* step, const char* job) { return get(step).empty() ? get(job) : get(step); };

  BatchJob job;
  job.job_id = get("SLURM_JOB_ID");
  if (job.job_id.empty()) job.job_id = get("SLURM_JOBID");
  if (job.job_id.empty()) return std::nullopt;
  job.scheduler = "slurm";
  job.step_id = get("SLURM_STEP_ID");
  job.array_job_id = get("SLURM_ARRAY_JOB_ID");
  job.array_task_id = get("SLURM_ARRAY_TASK_ID");
  job.node_list = step_or_job("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST");
  job.tasks_per_node = step_or_job("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
  job.nodes = get("SLURM_STEP_NUM_NODES").empty() ? count("SLURM_JOB_NUM_NODES") : count("SLURM_STEP_NUM_NODES");
  job.tasks = get("SLURM_STEP_NUM_TASKS").empty() ? count("SLURM_NTASKS") : count("SLURM_STEP_NUM_TASKS");
  job.cpus_per_task = count("SLURM_CPUS_PER_TASK");
  job.restarts = count("SLURM_RESTART_COUNT");
  return job;
}

std::string BatchJob::describe() const {
  std::string s = scheduler + " job " + job_id + (step_id.empty() ? "" : "." + step_id);
  if (!array_job_id.empty()) s += " (array " + array_job_id + "_" + array_task_id + ")";
  if (restarts > 0) s += ", requeued " + std::to_string(restarts) + (restarts == 1 ? " time" : " times");
  if (nodes > 0) s += ", " + std::to_string(nodes) + " node(s)";
  if (!node_list.empty()) s += " " + node_list;
  if (!tasks_per_node.empty()) s += ", tasks per node " + tasks_per_node;
  if (cpus_per_task > 0) s += ", " + std::to_string(cpus_per_task) + " CPU(s) per task";
  return s;
}

nlohmann::json BatchJob::to_json() const {
  nlohmann::json j = {{"scheduler", scheduler}, {"job_id", job_id}, {"restarts", restarts}};
  if (!step_id.empty()) j["step_id"] = step_id;
  if (!array_job_id.empty()) j["array"] = {{"job_id", array_job_id}, {"task_id", array_task_id}};
  if (!node_list.empty()) j["nodes"] = node_list;
  if (nodes > 0) j["node_count"] = nodes;
  if (tasks > 0) j["tasks"] = tasks;
  if (!tasks_per_node.empty()) j["tasks_per_node"] = tasks_per_node;
  if (cpus_per_task > 0) j["cpus_per_task"] = cpus_per_task;
  return j;
}

std::string thread_count_warning(const BatchJob& job, int threads) {
  if (job.cpus_per_task <= 0 || job.cpus_per_task == threads) return "";
  return "Slurm gave each task " + std::to_string(job.cpus_per_task) + " CPU(s) (SLURM_CPUS_PER_TASK) but this run uses " +
         std::to_string(threads) + " thread(s): " +
         (threads > job.cpus_per_task ? "the threads share CPUs and slow each other down"
                                      : "some of the task's CPUs stay idle") +
         "; set OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK (or --kokkos-threads) in the job script";
}

}  // namespace tessera::parallel
