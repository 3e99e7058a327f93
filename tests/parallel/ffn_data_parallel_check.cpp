// Run under mpirun with the folder of a `tessera datagen cells` data set (train.txt,
// validation.txt): trains a small flood-filling network data-parallel over all ranks (each rank
// its own slots of the batch, every FOV moved by the network's prediction) and the same network
// on this rank alone with the whole batch, then checks that every step's loss, the final
// weights and the validation loss agree. Exit status 0 on every rank when they do.
#include <cstdio>
#include <string>

#include "support/mpi_program.hpp"
#include "support/run_comparison.hpp"
#include "tessera/ffn/ffn_run.hpp"
#include "tessera/parallel/communicator.hpp"

using namespace tessera;

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    if (argc < 2) throw Error("usage: ffn_data_parallel_check DATA_FOLDER");
    const std::string data = argv[1];
    // Six steps: the FOVs of steps after the first hold the earlier predictions and lie where
    // they moved them, so the ranks must feed back what they predicted for their own slots.
    auto config = nlohmann::json::parse(R"({
      "ffn": {"fov": 7, "delta": 2},
      "model": {"input": {"channels": 2, "size": [7, 7, 7]},
                "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "relu"},
                           {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "r2", "type": "relu", "inputs": ["c2"]},
                           {"name": "c3", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "sum", "type": "add", "inputs": ["c3", "c2"]}, {"type": "relu"},
                           {"name": "logits", "type": "conv3d", "filters": 1, "kernel": 1}]},
      "loss": {"type": "sigmoid_cross_entropy"},
      "optimizer": {"type": "adam", "lr": 0.01},
      "data": {"source": "hdf5", "normalize": {"transform": "none", "mean": 137, "std": 44}, "seeds": 64,
               "validation": {"seeds": 8}},
      "training": {"epochs": 1, "max_steps": 6, "batch_size": 4, "seed": 3, "log_every": 1, "check_replicas": true}})");
    config["data"]["sample_list"] = data + "/train.txt";
    config["data"]["validation"]["sample_list"] = data + "/validation.txt";
    testing::RunComparison c(config, config, [] { return std::make_shared<ffn::FfnRun>(); });
    failed = c.differs_beyond(1e-5) || c.serial_report().step_losses.size() != 6;
    std::printf(
        "rank %d of %d: %zu steps, max relative loss difference %.2e, max weight difference %.2e (largest weight "
        "%.2f), validation difference %.2e: %s\n",
        world.rank(), world.size(), c.serial_report().step_losses.size(), c.loss_diff, c.weight_diff, c.weight_scale,
        c.validation_diff, failed ? "DIFFERENT" : "equal");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
