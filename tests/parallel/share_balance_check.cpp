// Run under mpirun on 2 ranks: measured balance ("balance": "measured") on a synthetic speed
// difference. Each rank's training set sleeps for every sample it loads, rank 1 three times as
// long as rank 0, so rank 0 trains about three samples while rank 1 trains one. The run
// measures the ranks over its first steps, moves the shares of its batch of 16 towards 12/4,
// and still trains exactly what one rank with the whole batch trains (synchronised batch norm,
// dropout placed by global sample). Exit status 0 on every rank when the shares are within one
// sample of those the sleeps imply and the runs agree.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

#include "support/mpi_program.hpp"
#include "support/run_comparison.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/run_extension.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

namespace {

/// A training set that sleeps `per_sample` for every sample it loads: a rank of that much
/// less speed.
class SleepingDataset final : public io::Dataset {
 public:
  SleepingDataset(std::unique_ptr<io::Dataset> inner, std::chrono::microseconds per_sample)
      : inner_(std::move(inner)), per_sample_(per_sample) {}
  std::string describe() const override { return inner_->describe() + ", sleeping per sample"; }
  int64_t size() const override { return inner_->size(); }
  Shape sample_shape() const override { return inner_->sample_shape(); }
  Shape target_shape() const override { return inner_->target_shape(); }
  bool targets_per_voxel() const override { return inner_->targets_per_voxel(); }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override {
    std::this_thread::sleep_for(per_sample_ * static_cast<int64_t>(indices.size()));
    inner_->load(indices, box, inputs, targets);
  }

 private:
  std::unique_ptr<io::Dataset> inner_;
  std::chrono::microseconds per_sample_;
};

/// A standard run whose training set sleeps as fast as this rank is said to be.
class SleepingRun final : public train::RunExtension {
 public:
  explicit SleepingRun(std::chrono::microseconds per_sample) : per_sample_(per_sample) {}
  std::string section() const override { return "sleeping"; }
  void configure(ConfigObject* /*section*/) override {}
  io::DataSplit make_datasets(ConfigObject& data, const train::TrainingOptions& options,
                              const model::Model& /*model*/) override {
    io::DataSplit split = io::make_datasets(data, options.seed);
    split.train = std::make_unique<SleepingDataset>(std::move(split.train), per_sample_);
    return split;
  }
  std::unique_ptr<train::BatchSource> training_source(train::Trainer& /*trainer*/) override { return nullptr; }

 private:
  std::chrono::microseconds per_sample_;
};

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    if (world.size() != 2) throw Error("share_balance_check runs on 2 ranks");
    auto config = nlohmann::json::parse(R"({
      "model": {"input": {"channels": 2, "size": [6, 6, 6]},
                "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                           {"name": "bn", "type": "batch_norm", "sync": true}, {"type": "relu"},
                           {"type": "max_pool3d"}, {"type": "dropout", "rate": 0.25},
                           {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
      "loss": {"type": "mse"},
      "optimizer": {"type": "sgd", "lr": 0.02, "momentum": 0.9},
      "data": {"source": "synthetic_fields", "samples": 160, "validation_samples": 20, "size": 6, "channels": 2},
      "training": {"epochs": 2, "batch_size": 16, "seed": 3, "log_every": 5}})");
    auto parallel_config = config;
    parallel_config["training"]["balance"] = "measured";
    // Rank 1 sleeps three times as long per sample: its speed is about a third of rank 0's,
    // and the batch's shares 12/4.
    const std::chrono::microseconds per_sample(world.rank() == 0 ? 2000 : 6000);
    testing::RunComparison c(parallel_config, config, [&] { return std::make_shared<SleepingRun>(per_sample); });
    const std::vector<int64_t> shares = c.parallel().trainer().plan().slice_rows(16);
    const bool balanced = shares.size() == 2 && shares[0] >= 11 && shares[0] <= 13;
    failed = c.differs_beyond(1e-5) || !balanced;
    std::printf(
        "rank %d: shares %lld/%lld of 16 after measured balance (expected about 12/4), max relative loss "
        "difference to one rank %.2e, max weight difference %.2e, validation difference %.2e: %s\n",
        world.rank(), static_cast<long long>(shares.at(0)), static_cast<long long>(shares.at(1)), c.loss_diff,
        c.weight_diff, c.validation_diff, failed ? "FAILED" : "ok");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
