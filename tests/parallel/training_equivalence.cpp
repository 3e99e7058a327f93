// Run under mpirun: trains an example model (cosmoflow-small, unet3d-small) for a few steps
// with its layers split as given, and the same model on this rank alone, then checks that
// every step's loss and the final weights (each shard against its slice) agree.
//
//   training_equivalence [--optimizer JSON] [--accumulate K] CONFIG SIZE BATCH STEPS DISTRIBUTION
//                        [LAYERS REST_DISTRIBUTION]
//
// --optimizer replaces the config's optimizer section (LARS and LAMB take each tensor's whole
// norm, which a shard must complete over its group); --accumulate sums K micro-batches of
// BATCH per step.
//
// DISTRIBUTION (JSON) is the model-wide one; LAYERS, an index or a comma-separated list of
// layer names, gives REST_DISTRIBUTION to the layers from that index on or to the named ones
// (e.g. CosmoFlow's deep layers over samples, or its deep layers split by filter).
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/mpi_program.hpp"
#include "support/run_comparison.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

/// The leading --optimizer JSON and --accumulate K, taken off argc/argv.
struct Options {
  json optimizer;
  int64_t accumulate = 1;
};

Options take_options(int& argc, char**& argv) {
  Options o;
  while (argc > 2 && std::string(argv[1]).rfind("--", 0) == 0) {
    const std::string flag = argv[1];
    if (flag == "--optimizer")
      o.optimizer = json::parse(argv[2]);
    else if (flag == "--accumulate")
      o.accumulate = std::stoll(argv[2]);
    else
      throw Error("unknown option " + flag);
    argv += 2;
    argc -= 2;
  }
  return o;
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    const Options options = take_options(argc, argv);
    const json& optimizer = options.optimizer;
    const int64_t accumulate = options.accumulate;
    if (argc != 6 && argc != 8)
      throw Error("usage: training_equivalence [--optimizer JSON] [--accumulate K] CONFIG SIZE BATCH STEPS "
                  "DISTRIBUTION [LAYERS REST]");
    std::ifstream in(argv[1]);
    if (!in) throw IoError(std::string("cannot read ") + argv[1]);
    json config = json::parse(in);
    const int64_t size = std::stoll(argv[2]), batch = std::stoll(argv[3]), steps = std::stoll(argv[4]);
    json& model = config["model"];
    auto& dims = model["input"]["size"];
    for (auto& d : dims) d = size;
    config["data"]["size"] = size;
    config["data"]["samples"] = batch * accumulate * steps;
    config["data"]["validation_samples"] = batch;
    config["training"]["batch_size"] = batch;
    config["training"]["accumulate"] = accumulate;
    config["training"]["epochs"] = 1;
    config["training"]["log_every"] = 1;
    // Adam divides each gradient by its own running magnitude, so gradients that are rounding
    // noise (a conv bias ahead of batch norm has a true gradient of zero) become steps of ±lr
    // whose signs depend on summation order: runs agree only to ~lr. SGD keeps the comparison
    // at float tolerance.
    if (config["optimizer"].value("type", "") == "adam")
      config["optimizer"] = {{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.9}};
    if (!optimizer.is_null()) config["optimizer"] = optimizer;
    json serial = config;
    model["distribution"] = json::parse(argv[5]);
    if (argc == 8) {
      const std::string layers = argv[6];
      const bool by_index = layers.find_first_not_of("0123456789") == std::string::npos;
      const std::string names = "," + layers + ",";
      for (size_t i = 0; i < model["layers"].size(); ++i) {
        json& l = model["layers"][i];
        const bool named = names.find("," + l.value("name", std::string()) + ",") != std::string::npos;
        if (by_index ? i >= std::stoul(layers) : named) l["distribution"] = json::parse(argv[7]);
      }
    }
    const testing::RunComparison c(config, serial);
    const auto& rs = c.serial_report();
    failed = c.differs_beyond(1e-4);
    std::printf(
        "rank %d of %d, %s at %lld^3: %zu steps, losses %.4f -> %.4f, max relative loss difference %.2e, max "
        "weight difference %.2e (largest weight %.2f), validation difference %.2e: %s\n",
        world.rank(), world.size(), config.value("name", "model").c_str(), static_cast<long long>(size),
        rs.step_losses.size(), rs.step_losses.front(), rs.step_losses.back(), c.loss_diff, c.weight_diff,
        c.weight_scale, c.validation_diff, failed ? "DIFFERENT" : "equal");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
