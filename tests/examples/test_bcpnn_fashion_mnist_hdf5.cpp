// examples/bcpnn/bcpnn_fashion_mnist.json at a tiny size: on the first 4096 Fashion-MNIST
// training images (Debian's dataset-fashion-mnist, imported as the README says), a smaller
// BCPNN layer learns for 2 epochs and a read-out then trains on its features for 2; the same
// read-out on the features of the untrained layer (no local-learning epochs) is the baseline.
// The local rule must have learned: its features classify the first 1000 test images clearly
// better than the untrained ones.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "support/fashion_mnist_subset.hpp"
#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("The BCPNN example learns features of Fashion-MNIST at a tiny size", "[example][slow][bcpnn]") {
  const testing::FashionMnistSubset data("tessera_bcpnn_example", 4096, 1000);
  REQUIRE(data.imported().train.samples == 4096);

  auto config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/bcpnn/bcpnn_fashion_mnist.json");
  config["data"]["files"] = data.train_file();
  config["data"]["validation"]["files"] = data.test_file();
  auto& layer = config["model"]["layers"][0];
  layer.update({{"hypercolumns", 10}, {"minicolumns", 30}, {"trace_rate", 0.02}, {"rewire_every", 8}});
  layer["bias_regulation"]["rate"] = 0.01;
  config["training"].update({{"epochs", 4}, {"batch_size", 64}, {"log_every", 16}});
  const auto test_accuracy = [&](int64_t local_epochs) {
    auto c = config;
    c["local_learning"]["epochs"] = local_epochs;
    c["training"]["epochs"] = local_epochs + 2;
    train::RunOverrides o;
    o.progress = false;
    train::TrainingRun run(c, o);
    return run.run().validation_accuracy;
  };
  const double learned = test_accuracy(2), untrained = test_accuracy(0);
  std::printf("bcpnn example: test accuracy %.1f%% with learned features, %.1f%% with the untrained layer's "
              "(1000 images, chance 10%%)\n",
              100.0 * learned, 100.0 * untrained);
  CHECK(learned >= untrained + 0.05);
  CHECK(learned >= 0.6);
}
