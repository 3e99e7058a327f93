// Run under mpirun at any rank count: trains a small CNN data-parallel over all ranks, and
// the same CNN on this rank alone with the whole global batch, then checks that every step's
// loss and the final weights agree. Exit status 0 on every rank when they do.
// Arguments (optional): the global batch (default 8; one that does not divide by the ranks
// gives them uneven shares) and a "balance" for the parallel run as JSON ("[3, 1]": shares by
// weight; "measured": shares set from measured speeds after 4 steps and at each epoch's end).
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <cstdio>
#include <cstring>

#include "support/mpi_program.hpp"
#include "support/run_comparison.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/replica_check.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    // Dropout checks that masks follow the global sample, not the rank's local row; batch norm
    // with "sync" that statistics and their gradients cover the whole global batch; 1 KiB
    // buckets that the gradient all-reduce runs in several buckets overlapping backprop;
    // check_replicas that the ranks' weights stay bit-identical after every step.
    auto config = nlohmann::json::parse(R"({
      "model": {"input": {"channels": 2, "size": [6, 6, 6]},
                "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "bn", "type": "batch_norm", "sync": true}, {"type": "leaky_relu"}, {"type": "max_pool3d"}, {"type": "dropout", "rate": 0.25},
                           {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "elu"},
                           {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
      "loss": {"type": "mse"},
      "optimizer": {"type": "sgd", "lr": 0.02, "momentum": 0.9, "schedule": {"type": "cosine", "warmup_steps": 2}},
      "data": {"source": "synthetic_fields", "samples": 48, "validation_samples": 12, "size": 6, "channels": 2},
      "training": {"epochs": 2, "batch_size": 8, "seed": 7, "log_every": 1, "allreduce_bucket_kb": 1,
                   "check_replicas": true}})");
    auto parallel_config = config;
    if (argc > 1) {
      const int batch = std::atoi(argv[1]);
      parallel_config["training"]["batch_size"] = batch;
      config["training"]["batch_size"] = batch;
    }
    if (argc > 2) parallel_config["training"]["balance"] = nlohmann::json::parse(argv[2]);
    testing::RunComparison c(parallel_config, config);
    // The replica check must notice one ulp of one weight on one rank, and name it.
    bool replica_check_caught = world.size() == 1;
    if (world.size() > 1) {
      const Tensor& c2 = c.parallel().model().parameters().find("c2.weight")->value;
      auto values = c2.to_host();
      if (world.rank() == world.size() - 1) values[5] = std::nextafter(values[5], 1e9f);
      c2.copy_from_host(values);
      try {
        train::check_replicas(world, c.parallel().model().parameters(), 12);
      } catch (const parallel::DistError& e) {
        replica_check_caught = std::strstr(e.what(), "after step 12: parameter 'c2.weight'") != nullptr;
        if (!replica_check_caught) std::printf("unexpected replica check message: %s\n", e.what());
      }
    }
    failed = c.differs_beyond(1e-5) || !replica_check_caught;
    const std::string shares =
        parallel::shares_text(c.parallel().trainer().plan().slice_rows(c.parallel().options().batch_size));
    std::printf(
        "rank %d of %d, batch %d in shares %s: %zu steps, max relative loss difference %.2e, max weight difference %.2e "
        "(largest weight %.2f), validation difference %.2e, a perturbed replica caught: %s: %s\n",
        world.rank(), world.size(), static_cast<int>(c.parallel().options().batch_size), shares.c_str(),
        c.serial_report().step_losses.size(), c.loss_diff, c.weight_diff, c.weight_scale,
        c.validation_diff, replica_check_caught ? "yes" : "NO", failed ? "DIFFERENT" : "equal");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
