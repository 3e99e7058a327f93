#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/optim/optimizer_section.hpp"

using namespace tessera;
using tessera::optim::OptimizerSection;

namespace {

std::string config_error(const nlohmann::json& section, int64_t total_steps = 100, int64_t batch = 8) {
  try {
    OptimizerSection::read(section, total_steps, batch);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an optimizer section without schedule or scaling is the base rate unscaled", "[optim][section]") {
  const auto parts = OptimizerSection::read({{"type", "sgd"}, {"lr", 0.05}}, 100, 8);
  CHECK(parts.optimizer->type() == "sgd");
  CHECK(parts.optimizer->base_lr() == 0.05);
  CHECK(parts.schedule->str() == "constant base_lr=0.05");
  CHECK(parts.lr_factor == 1.0);
}

TEST_CASE("the schedule and scaling are read beside the optimizer's own keys", "[optim][section]") {
  const nlohmann::json section = {{"type", "adam"},
                                  {"lr", 0.01},
                                  {"schedule", {{"type", "cosine"}, {"warmup_steps", 10}}},
                                  {"lr_scaling", {{"reference_batch", 4}}}};
  const auto parts = OptimizerSection::read(section, 110, 32);
  CHECK(parts.optimizer->type() == "adam");
  CHECK(parts.schedule->str() == "cosine base_lr=0.01 warmup_steps=10 warmup_start_factor=0 min_lr=0 total_steps=110");
  CHECK(parts.schedule->lr(60) == Approx(0.005));
  CHECK(parts.lr_factor == 8.0);  // linear rule: 32 / 4
  CHECK(OptimizerSection(section).lr_factor(2) == 0.5);
}

TEST_CASE("optimizer section errors keep their JSON paths", "[optim][section]") {
  CHECK_THAT(config_error({{"type", "sgd"}}), Catch::Contains("$.optimizer.lr"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"momentun", 0.9}}),
             Catch::Contains("$.optimizer.momentun") && Catch::Contains("unknown key"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"lr_scaling", {{"reference", 2}}}}),
             Catch::Contains("$.optimizer.lr_scaling"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"lr_scaling", nlohmann::json::object()}}),
             Catch::Contains("$.optimizer.lr_scaling.reference_batch: required key is missing"));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"lr_scaling", {{"reference_batch", 0}}}}),
             Catch::Contains("$.optimizer.lr_scaling.reference_batch: expected an integer from 1 to "));
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr", 0.1}, {"schedule", {{"type", "linear"}}}}),
             Catch::Contains("$.optimizer.schedule.type"));
  CHECK_THAT(
      config_error({{"type", "sgd"}, {"lr", 0.1}, {"schedule", {{"type", "cosine"}, {"warmup_steps", 100}}}}, 100),
      Catch::Contains("$.optimizer.schedule.warmup_steps"));
  // The optimizer is read first, then the scaling, then the schedule.
  CHECK_THAT(config_error({{"type", "sgd"}, {"lr_scaling", {{"reference", 2}}}, {"schedule", {{"type", "x"}}}}),
             Catch::Contains("$.optimizer.lr"));
  CHECK_THAT(
      config_error({{"type", "sgd"}, {"lr", 0.1}, {"lr_scaling", {{"reference", 2}}}, {"schedule", {{"type", "x"}}}}),
      Catch::Contains("$.optimizer.lr_scaling"));
}

TEST_CASE("learning-rate scaling by the square root of the batch ratio", "[optim][section]") {
  const auto sqrt_rule = nlohmann::json::parse(
      R"({"type": "sgd", "lr": 0.1, "lr_scaling": {"reference_batch": 256, "rule": "sqrt"}})");
  CHECK(optim::OptimizerSection(sqrt_rule).lr_factor(1024) == Approx(2.0));
  CHECK(optim::OptimizerSection(sqrt_rule).lr_factor(64) == Approx(0.5));
  const auto linear = nlohmann::json::parse(
      R"({"type": "sgd", "lr": 0.1, "lr_scaling": {"reference_batch": 256, "rule": "linear"}})");
  CHECK(optim::OptimizerSection(linear).lr_factor(1024) == Approx(4.0));
  const auto bad = nlohmann::json::parse(
      R"({"type": "sgd", "lr": 0.1, "lr_scaling": {"reference_batch": 256, "rule": "cubic"}})");
  CHECK_THROWS_WITH(optim::OptimizerSection(bad).lr_factor(1024), Catch::Contains("$.optimizer.lr_scaling.rule"));
}
