// A run assembled in C++ (ModelBuilder, Loss::make, Sgd, SyntheticFields, Trainer) trains
// exactly as the run config that says the same: the same loss at every step and the same
// validation loss and metrics.
#include <catch2/catch.hpp>

#include "tessera/io/synthetic_fields.hpp"
#include "tessera/model/model_builder.hpp"
#include "tessera/optim/sgd.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;
namespace spec = tessera::model::spec;

TEST_CASE("A run built in C++ trains as the same run config does", "[train][builder]") {
  const auto config = nlohmann::json::parse(R"({
    "model": {"input": {"channels": 2, "size": [8, 8, 8]},
              "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                         {"name": "bn", "type": "batch_norm"},
                         {"name": "a1", "type": "relu"},
                         {"name": "p1", "type": "max_pool3d", "kernel": 2},
                         {"name": "f", "type": "flatten"},
                         {"name": "out", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "sgd", "lr": 0.01, "momentum": 0.9},
    "data": {"source": "synthetic_fields", "samples": 32, "validation_samples": 16, "size": 8, "channels": 2},
    "training": {"epochs": 2, "batch_size": 8, "seed": 11, "log_every": 2}})");
  train::RunOverrides overrides;
  overrides.progress = false;
  train::TrainingRun from_config(config, overrides);
  const train::TrainingReport expected = from_config.run();

  model::BuildOptions build;
  build.seed = 11;
  auto model = model::ModelBuilder(2, {8, 8, 8})
                   .add("c1", spec::conv3d(4).padding(1))
                   .add("bn", spec::batch_norm())
                   .add("a1", spec::relu())
                   .add("p1", spec::max_pool3d(2))
                   .add("f", spec::flatten())
                   .add("out", spec::dense(4))
                   .build(build);
  auto loss = layers::Loss::make("mse");
  optim::SgdOptions sgd;
  sgd.lr = 0.01;
  sgd.momentum = 0.9;
  optim::Sgd optimizer(sgd);
  io::SyntheticFields::Options fields;
  fields.samples = 32;
  fields.size = 8;
  fields.channels = 2;
  fields.seed = 11;
  io::DataSplit data;
  data.train = std::make_unique<io::SyntheticFields>(fields);
  fields.index_offset = 32;  // the validation samples follow the training ones
  fields.samples = 16;
  data.validation = std::make_unique<io::SyntheticFields>(fields);
  train::TrainingOptions options;
  options.epochs = 2;
  options.batch_size = 8;
  options.seed = 11;
  options.log_every = 2;
  options.progress = false;
  train::Trainer trainer(*model, *loss, optimizer, data, options, nlohmann::json::object());
  const train::TrainingReport report = trainer.run();

  REQUIRE(report.step_losses.size() == 8);
  CHECK(report.step_losses == expected.step_losses);
  CHECK(report.validation_loss == expected.validation_loss);
  CHECK(report.validation_baseline == expected.validation_baseline);
  CHECK(report.validation_metrics.mae == expected.validation_metrics.mae);
  CHECK(report.validation_loss > 0.0);
  CHECK(report.validation_metrics.mae > 0.0);
}

TEST_CASE("Loss::make names the losses it knows", "[train][builder]") {
  CHECK(layers::Loss::make("mse")->type() == "mse");
  CHECK(layers::Loss::make("softmax_cross_entropy")->type() == "softmax_cross_entropy");
  CHECK_THROWS_WITH(layers::Loss::make("l1", "my loss"),
                    Catch::Contains("my loss") && Catch::Contains("expected one of: mse, softmax_cross_entropy"));
}
