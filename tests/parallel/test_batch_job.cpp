#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tessera/parallel/batch_job.hpp"

using tessera::parallel::BatchJob;

namespace {
/// An environment made of `vars` alone.
auto environment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}
}  // namespace

TEST_CASE("Outside a batch job there is no job", "[parallel][batch_job]") {
  CHECK_FALSE(BatchJob::from_environment(environment({{"HOME", "/root"}})));
}

TEST_CASE("A Slurm step is described by its job, step, array task, requeues, nodes and tasks", "[parallel][batch_job]") {
  const auto job = BatchJob::from_environment(environment({{"SLURM_JOB_ID", "42"},
                                                           {"SLURM_STEP_ID", "0"},
                                                           {"SLURM_ARRAY_JOB_ID", "41"},
                                                           {"SLURM_ARRAY_TASK_ID", "3"},
                                                           {"SLURM_RESTART_COUNT", "1"},
                                                           {"SLURM_JOB_NUM_NODES", "3"},
                                                           {"SLURM_STEP_NUM_NODES", "2"},
                                                           {"SLURM_JOB_NODELIST", "n[0-2]"},
                                                           {"SLURM_STEP_NODELIST", "n[0-1]"},
                                                           {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                                                           {"SLURM_STEP_NUM_TASKS", "2"},
                                                           {"SLURM_CPUS_PER_TASK", "2"}}));
  REQUIRE(job);
  // The step's nodes, not the job's: the ranks run in the step.
  CHECK(job->nodes == 2);
  CHECK(job->node_list == "n[0-1]");
  CHECK(job->describe() ==
        "slurm job 42.0 (array 41_3), requeued 1 time, 2 node(s) n[0-1], tasks per node 1(x2), 2 CPU(s) per task");
  const auto j = job->to_json();
  CHECK(j["job_id"] == "42");
  CHECK(j["step_id"] == "0");
  CHECK(j["restarts"] == 1);
  CHECK(j["array"]["task_id"] == "3");
  CHECK(j["tasks"] == 2);
}

TEST_CASE("The batch script's view: job values where no step is set, numbers that are not numbers left out",
          "[parallel][batch_job]") {
  const auto job = BatchJob::from_environment(environment({{"SLURM_JOB_ID", "7"},
                                                           {"SLURM_JOB_NUM_NODES", "2"},
                                                           {"SLURM_JOB_NODELIST", "a,b"},
                                                           {"SLURM_TASKS_PER_NODE", "2(x2)"},
                                                           {"SLURM_NTASKS", "four"},
                                                           {"SLURM_RESTART_COUNT", "-3"}}));
  REQUIRE(job);
  CHECK(job->describe() == "slurm job 7, 2 node(s) a,b, tasks per node 2(x2)");
  CHECK(job->tasks == 0);
  CHECK(job->restarts == 0);
}

TEST_CASE("A thread count other than the CPUs Slurm gave each task is a warning naming both", "[parallel][batch_job]") {
  BatchJob job;
  job.scheduler = "slurm";
  job.job_id = "1";
  CHECK(tessera::parallel::thread_count_warning(job, 8).empty());  // no --cpus-per-task: nothing to compare
  job.cpus_per_task = 4;
  CHECK(tessera::parallel::thread_count_warning(job, 4).empty());
  const std::string more = tessera::parallel::thread_count_warning(job, 8);
  CHECK_THAT(more, Catch::Contains("4 CPU(s)") && Catch::Contains("8 thread(s)") && Catch::Contains("share CPUs"));
  CHECK_THAT(tessera::parallel::thread_count_warning(job, 1), Catch::Contains("idle"));
}
