// Run under mpirun: trains a bcpnn layer and a dense read-out on a two-cluster data set split
// over all ranks by samples, and the same run on this rank alone, then checks that every
// step's loss, the traces, the connection mask (rewired by structural plasticity during the
// run) and the read-out's weights agree: N ranks equal one rank on the same global batch.
//
//   bcpnn_data_parallel_check FOLDER   (a folder every rank can read; rank 0 writes the data)
#include <cmath>
#include <cstdio>

#include "support/cluster_samples.hpp"
#include "support/mpi_program.hpp"
#include "support/run_comparison.hpp"
#include "tessera/layers/bcpnn.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/traffic_counter.hpp"

using namespace tessera;

namespace {

/// The largest difference of the named buffer between the two runs, relative to its largest
/// value in the serial run.
double buffer_difference(const model::ParameterStore& parallel, const model::ParameterStore& serial,
                         const std::string& name) {
  const auto a = parallel.find(name)->value.to_host();
  const auto b = serial.find(name)->value.to_host();
  double diff = 0.0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  return diff / scale;
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    if (argc != 2) throw Error("usage: bcpnn_data_parallel_check FOLDER");
    const std::string folder = argv[1];
    if (world.rank() == 0) {
      testing::write_two_cluster_file(folder + "/train.h5", 96, 21);
      testing::write_two_cluster_file(folder + "/test.h5", 24, 22);
    }
    world.barrier();
    nlohmann::json config = testing::two_cluster_bcpnn_config(folder + "/train.h5", folder + "/test.h5", 2, 3);
    config["training"]["batch_size"] = 12;  // 6, 4 or 3 samples a rank on 2, 3 or 4 ranks
    nlohmann::json serial = config;
    config["model"]["distribution"] = {{"sample", world.size()}};
    testing::RunComparison c(config, serial);
    const auto& parallel_store = c.parallel().model().parameters();
    const auto& serial_store = c.serial().model().parameters();
    double traces = 0.0;
    for (const char* name : {"b.p_i", "b.p_j", "b.p_ij", "b.k_beta", "b.weight", "b.bias"})
      traces = std::max(traces, buffer_difference(parallel_store, serial_store, name));
    const bool same_mask =
        parallel_store.find("b.mask")->value.to_host() == serial_store.find("b.mask")->value.to_host();
    const auto& layer = dynamic_cast<const layers::Bcpnn&>(c.parallel().model().layer(0));
    // 16 learning steps (2 epochs of 8) each all-reduce (inputs + 1)·units + inputs floats,
    // 32 inputs (16 pixels as pairs) and 4 units: a ring's share of them leaves each rank.
    const double ranks = world.size(), expected = 16 * 2.0 * (ranks - 1.0) / ranks * ((32 + 1) * 4 + 32) * 4.0;
    const double counted = parallel::TrafficCounter::bytes(parallel::TrafficCounter::local_learning);
    failed = c.differs_beyond(1e-4) || traces > 1e-5 || !same_mask || layer.swaps_made() == 0 ||
             std::abs(counted - expected) > 1e-6 * expected;
    std::printf(
        "rank %d of %d: %zu steps, losses %.4f -> %.4f, max relative loss difference %.2e, traces and derived "
        "weights %.2e, masks %s (%lld swaps), read-out weights %.2e, trace sums sent %.0f bytes (formula %.0f): "
        "%s\n",
        world.rank(), world.size(), c.serial_report().step_losses.size(), c.serial_report().step_losses.front(),
        c.serial_report().step_losses.back(), c.loss_diff, traces, same_mask ? "equal" : "DIFFERENT",
        static_cast<long long>(layer.swaps_made()), c.weight_diff, counted, expected, failed ? "DIFFERENT" : "equal");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
