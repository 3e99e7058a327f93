// examples/resnet/resnet8_fashion_mnist.json at a tiny size: the ResNet trains on the first
// 2048 Fashion-MNIST training images (Debian's dataset-fashion-mnist, imported as the README
// says) for 2 epochs and is validated on the first 512 test images. It must learn: the logged
// loss falls at least 2x and the test accuracy reaches 50%, five times chance (10%).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "support/fashion_mnist_subset.hpp"
#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("The ResNet example learns Fashion-MNIST at a tiny size", "[example][slow]") {
  const testing::FashionMnistSubset data("tessera_resnet_example", 2048, 512);
  REQUIRE(data.imported().train.samples == 2048);

  auto config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/resnet/resnet8_fashion_mnist.json");
  config["data"]["files"] = data.train_file();
  config["data"]["validation"]["files"] = data.test_file();
  config["optimizer"]["schedule"]["warmup_steps"] = 8;
  config["training"].update({{"epochs", 2}, {"batch_size", 64}, {"log_every", 8}});
  train::RunOverrides o;
  o.progress = false;
  train::TrainingRun run(config, o);
  const auto report = run.run();
  REQUIRE(report.logged_losses.size() >= 2);
  const double first = report.logged_losses.front(), last = report.logged_losses.back();
  std::printf("resnet example: loss %.4f -> %.4f (%.1fx), test accuracy %.1f%% on 512 images (chance 10%%), "
              "%.1f samples/s\n",
              first, last, first / last, 100.0 * report.validation_accuracy, report.samples_per_second);
  CHECK(first / last >= 2.0);
  CHECK(report.validation_accuracy >= 0.5);
}
