// Local-learning epochs ("local_learning"): a BCPNN layer learns alone first, then a dense
// read-out learns by gradients on its fixed features; checkpoints hold the traces, so a run
// resumed in either phase ends where an unbroken one does; bad settings are refused by name.
#include <catch2/catch.hpp>

#include "support/cluster_samples.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

train::RunOverrides quiet() {
  train::RunOverrides o;
  o.progress = false;
  return o;
}

std::vector<float> values_of(train::TrainingRun& run, const std::string& name) {
  return run.model().parameters().find(name)->value.to_host();
}

struct ClusterData {
  testing::ScratchFolder folder{"tessera_local_learning"};
  ClusterData() {
    testing::write_two_cluster_file(folder / "train.h5", 64, 11);
    testing::write_two_cluster_file(folder / "test.h5", 32, 12);
  }
  json config(int64_t local_epochs, int64_t epochs) const {
    return testing::two_cluster_bcpnn_config(folder / "train.h5", folder / "test.h5", local_epochs, epochs);
  }
};

}  // namespace

TEST_CASE("local-learning epochs train the bcpnn layer alone, then the read-out on its fixed features",
          "[train][bcpnn]") {
  const ClusterData data;
  train::TrainingRun fresh(data.config(2, 5), quiet());
  const auto readout_start = values_of(fresh, "readout.weight");
  const auto traces_start = values_of(fresh, "b.p_ij");
  REQUIRE(fresh.trainer().local_learning_steps() == 16);

  // Only the local-learning steps: the traces moved, the read-out did not.
  train::RunOverrides first = quiet();
  first.max_steps = 16;
  train::TrainingRun local(data.config(2, 5), first);
  local.run();
  CHECK(values_of(local, "readout.weight") == readout_start);
  CHECK(values_of(local, "b.p_ij") != traces_start);

  // The whole run: the read-out learned, the bcpnn layer kept what it had after its epochs.
  const train::TrainingReport report = fresh.run();
  for (const char* buffer : {"b.p_i", "b.p_j", "b.p_ij", "b.mask", "b.k_beta", "b.weight", "b.bias"}) {
    INFO(buffer);
    CHECK(values_of(fresh, buffer) == values_of(local, buffer));
  }
  CHECK(values_of(fresh, "readout.weight") != readout_start);
  CHECK(report.step_losses.size() == 40);
  CHECK(report.validation_accuracy >= 0.95);
  CHECK(fresh.trainer().lr(3) == 0.0);
  CHECK(fresh.trainer().lr(16) > 0.0);
}

TEST_CASE("a run resumed inside or after its local-learning epochs ends where an unbroken one does",
          "[train][bcpnn][checkpoint]") {
  const ClusterData data;
  train::TrainingRun whole(data.config(2, 3), quiet());
  whole.run();
  for (const int64_t stop : {5, 20}) {
    INFO("stopped after step " << stop);
    train::RunOverrides first = quiet();
    first.max_steps = stop;
    first.checkpoint_file = data.folder / "part.ckpt";
    train::TrainingRun part(data.config(2, 3), first);
    part.run();
    train::RunOverrides second = quiet();
    second.resume_file = data.folder / "part.ckpt";
    train::TrainingRun resumed(data.config(2, 3), second);
    resumed.run();
    for (const char* name : {"b.p_ij", "b.mask", "b.weight", "b.k_beta", "readout.weight", "readout.bias"}) {
      INFO(name);
      CHECK(values_of(resumed, name) == values_of(whole, name));
    }
  }
}

TEST_CASE("local-learning settings that cannot work are refused by name", "[train][bcpnn]") {
  const ClusterData data;
  CHECK_THROWS_WITH(train::TrainingRun(data.config(4, 3), quiet()),
                    Catch::Contains("$.local_learning.epochs") && Catch::Contains("more than the run's 3 epochs"));
  json no_local_layer = data.config(1, 2);
  no_local_layer["model"]["layers"] = json::parse(R"([{"type": "flatten"}, {"type": "dense", "units": 2}])");
  CHECK_THROWS_WITH(train::TrainingRun(no_local_layer, quiet()),
                    Catch::Contains("$.local_learning.epochs") && Catch::Contains("no layer of the model learns"));
  json typo = data.config(1, 2);
  typo["local_learning"]["epoch"] = 1;
  CHECK_THROWS_WITH(train::TrainingRun(typo, quiet()), Catch::Contains("$.local_learning"));
}
