#include <catch2/catch.hpp>
#include <cmath>

#include "tessera/optim/lr_schedule.hpp"

using namespace tessera;
using tessera::optim::LrSchedule;

namespace {

constexpr double pi = 3.14159265358979323846;

std::unique_ptr<LrSchedule> schedule(const nlohmann::json& j, double base_lr, int64_t total_steps) {
  ConfigObject cfg(j, "$.schedule");
  return LrSchedule::from_json(cfg, base_lr, total_steps);
}

std::string config_error(const nlohmann::json& j, double base_lr = 0.1, int64_t total_steps = 1000) {
  try {
    schedule(j, base_lr, total_steps);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the default schedule is the base rate at every step", "[optim][lr_schedule]") {
  const auto s = LrSchedule::constant(0.1);
  CHECK(s->lr(0) == 0.1);
  CHECK(s->lr(12345678) == 0.1);
  CHECK(s->base_lr() == 0.1);
  CHECK(s->str() == "constant base_lr=0.1");
  CHECK_THROWS_AS(s->lr(-1), Error);
  CHECK_THROWS_AS(LrSchedule::constant(0.0), Error);
}

TEST_CASE("warmup ramps linearly from base·start_factor to base", "[optim][lr_schedule]") {
  const auto s = schedule({{"type", "constant"}, {"warmup_steps", 10}, {"warmup_start_factor", 0.1}}, 1.0, 100);
  CHECK(s->lr(0) == Approx(0.1));
  CHECK(s->lr(5) == Approx(0.55));
  CHECK(s->lr(9) == Approx(0.91));
  CHECK(s->lr(10) == Approx(1.0));
  CHECK(s->lr(50) == Approx(1.0));
  CHECK(s->str() == "constant base_lr=1 warmup_steps=10 warmup_start_factor=0.1");

  const auto from_zero = schedule({{"type", "constant"}, {"warmup_steps", 4}}, 0.2, 100);
  CHECK(from_zero->lr(0) == 0.0);
  CHECK(from_zero->lr(1) == Approx(0.05));
  CHECK(from_zero->lr(4) == Approx(0.2));
}

TEST_CASE("step schedule multiplies by gamma every step_size steps after warmup", "[optim][lr_schedule]") {
  const auto s = schedule({{"type", "step"}, {"step_size", 30}, {"gamma", 0.5}}, 0.8, 1000);
  CHECK(s->lr(0) == Approx(0.8));
  CHECK(s->lr(29) == Approx(0.8));
  CHECK(s->lr(30) == Approx(0.4));
  CHECK(s->lr(59) == Approx(0.4));
  CHECK(s->lr(60) == Approx(0.2));
  CHECK(s->str() == "step base_lr=0.8 step_size=30 gamma=0.5");

  const auto warm = schedule({{"type", "step"}, {"step_size", 30}, {"warmup_steps", 10}}, 1.0, 1000);
  CHECK(warm->lr(5) == Approx(0.5));
  CHECK(warm->lr(10) == Approx(1.0));
  CHECK(warm->lr(39) == Approx(1.0));
  CHECK(warm->lr(40) == Approx(0.1));  // default gamma
  CHECK(warm->lr(70) == Approx(0.01));
}

TEST_CASE("cosine schedule falls from base after warmup to min_lr at the last step", "[optim][lr_schedule]") {
  const auto s = schedule({{"type", "cosine"}, {"warmup_steps", 10}, {"min_lr", 0.1}}, 1.0, 110);
  CHECK(s->lr(0) == Approx(0.0));
  CHECK(s->lr(10) == Approx(1.0));
  CHECK(s->lr(35) == Approx(0.1 + 0.9 * 0.5 * (1.0 + std::cos(pi / 4))));
  CHECK(s->lr(60) == Approx(0.55));  // midpoint
  CHECK(s->lr(109) > 0.1);
  CHECK(s->lr(110) == Approx(0.1));
  CHECK(s->lr(500) == Approx(0.1));
  for (int64_t k = 10; k < 110; ++k) CHECK(s->lr(k + 1) <= s->lr(k));
  CHECK(s->str() == "cosine base_lr=1 warmup_steps=10 warmup_start_factor=0 min_lr=0.1 total_steps=110");

  const auto plain = schedule({{"type", "cosine"}}, 0.4, 100);
  CHECK(plain->lr(0) == Approx(0.4));
  CHECK(plain->lr(50) == Approx(0.2));
  CHECK(plain->lr(100) == Approx(0.0).margin(1e-15));
}

TEST_CASE("schedule configuration errors name the JSON path", "[optim][lr_schedule][config]") {
  CHECK_THAT(config_error({{"type", "linear"}}), Catch::Contains("$.schedule.type:") && Catch::Contains("linear"));
  CHECK_THAT(config_error({{"warmup_steps", 5}}), Catch::Contains("$.schedule.type: required key is missing"));
  CHECK_THAT(config_error({{"type", "step"}}), Catch::Contains("$.schedule.step_size: required key is missing"));
  CHECK_THAT(config_error({{"type", "step"}, {"step_size", 0}}), Catch::Contains("$.schedule.step_size:"));
  CHECK_THAT(config_error({{"type", "step"}, {"step_size", 10}, {"gamma", 0.0}}), Catch::Contains("$.schedule.gamma:"));
  // A key of another schedule type is not silently ignored.
  CHECK_THAT(config_error({{"type", "step"}, {"step_size", 10}, {"min_lr", 0.01}}),
             Catch::Contains("$.schedule.min_lr: unknown key"));
  CHECK_THAT(config_error({{"type", "constant"}, {"warmup_steps", -1}}), Catch::Contains("$.schedule.warmup_steps:"));
  CHECK_THAT(config_error({{"type", "constant"}, {"warmup_start_factor", 1.5}}),
             Catch::Contains("$.schedule.warmup_start_factor:"));
  CHECK_THAT(config_error({{"type", "cosine"}, {"min_lr", 0.5}}, 0.1), Catch::Contains("$.schedule.min_lr:"));
  CHECK_THAT(config_error({{"type", "cosine"}, {"warmup_steps", 100}}, 0.1, 100),
             Catch::Contains("$.schedule.warmup_steps:") && Catch::Contains("total steps"));
  CHECK(config_error({{"type", "cosine"}, {"warmup_steps", 99}}, 0.1, 100) == "no error");
}

TEST_CASE("polynomial schedule falls as (1 - progress)^power after the warmup", "[optim][lr_schedule]") {
  const auto s = schedule({{"type", "poly"}, {"warmup_steps", 10}, {"power", 2.0}, {"min_lr", 0.1}}, 1.0, 110);
  CHECK(s->lr(5) == Approx(0.5));
  CHECK(s->lr(10) == Approx(1.0));
  // Halfway through the decay: 0.1 + 0.9·0.5² = 0.325.
  CHECK(s->lr(60) == Approx(0.325));
  CHECK(s->lr(110) == Approx(0.1));
  CHECK(s->lr(500) == Approx(0.1));
  CHECK(s->str() == "poly base_lr=1 warmup_steps=10 warmup_start_factor=0 power=2 min_lr=0.1 total_steps=110");
  const auto linear = schedule({{"type", "poly"}, {"power", 1.0}}, 0.4, 100);
  CHECK(linear->lr(25) == Approx(0.3));
  CHECK_THAT(config_error({{"type", "poly"}, {"power", 0.0}}, 0.1), Catch::Contains("$.schedule.power:"));
  CHECK_THAT(config_error({{"type", "poly"}, {"warmup_steps", 100}}, 0.1, 50),
             Catch::Contains("a poly schedule needs more total steps"));
}
