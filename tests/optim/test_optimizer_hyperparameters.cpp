// Hyper-parameters by key: what a population of trainers reads, varies and hands on.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/optim/adam.hpp"
#include "tessera/optim/sgd.hpp"

using namespace tessera;
using namespace tessera::optim;

TEST_CASE("sgd lists and sets its hyper-parameters by config key", "[optim]") {
  Sgd sgd(SgdOptions{0.1, 0.9, 0.0, false, 1e-4});
  const auto hp = sgd.hyperparameters();
  REQUIRE(hp.size() == 3);
  CHECK(hp.at("lr") == 0.1);
  CHECK(hp.at("momentum") == 0.9);
  CHECK(hp.at("weight_decay") == 1e-4);
  sgd.set_hyperparameter("lr", 0.02, "$.optimizer");
  sgd.set_hyperparameter("momentum", 0.5, "$.optimizer");
  CHECK(sgd.base_lr() == 0.02);
  CHECK(sgd.options().momentum == 0.5);
}

TEST_CASE("sgd refuses an unknown key or a value out of range and keeps its options", "[optim]") {
  Sgd sgd(SgdOptions{0.1, 0.9, 0.0, false, 0.0});
  CHECK_THROWS_WITH(sgd.set_hyperparameter("beta1", 0.5, "$.optimizer"),
                    Catch::Contains("$.optimizer.beta1") && Catch::Contains("no such hyper-parameter"));
  CHECK_THROWS_WITH(sgd.set_hyperparameter("lr", -1.0, "$.optimizer"), Catch::Contains("$.optimizer.lr"));
  CHECK_THROWS_WITH(sgd.set_hyperparameter("momentum", 1.0, "$.optimizer"), Catch::Contains("[0, 1)"));
  CHECK(sgd.base_lr() == 0.1);
  CHECK(sgd.options().momentum == 0.9);
}

TEST_CASE("a bound sgd keeps its momentum buffer: momentum cannot be switched off", "[optim]") {
  Sgd sgd(SgdOptions{0.1, 0.9, 0.0, false, 0.0});
  Tensor values(Shape{4}, "v"), grads(Shape{4}, "g");
  sgd.bind(values, grads);
  CHECK_THROWS_WITH(sgd.set_hyperparameter("momentum", 0.0, "$.optimizer"),
                    Catch::Contains("not be switched on or off"));
  sgd.set_hyperparameter("momentum", 0.8, "$.optimizer");
  CHECK(sgd.state().size() == 1);
}

TEST_CASE("adam lists and sets its hyper-parameters by config key", "[optim]") {
  Adam adam(AdamOptions{});
  const auto hp = adam.hyperparameters();
  REQUIRE(hp.size() == 5);
  CHECK(hp.at("beta2") == 0.999);
  adam.set_hyperparameter("beta1", 0.8, "$.optimizer");
  adam.set_hyperparameter("lr", 3e-4, "$.optimizer");
  CHECK(adam.options().beta1 == 0.8);
  CHECK(adam.base_lr() == 3e-4);
  CHECK_THROWS_WITH(adam.set_hyperparameter("momentum", 0.9, "$.optimizer"), Catch::Contains("$.optimizer.momentum"));
  CHECK_THROWS_WITH(adam.set_hyperparameter("epsilon", -1.0, "$.optimizer"), Catch::Contains("non-negative"));
  CHECK(adam.hyperparameters().at("epsilon") == 1e-8);
}
