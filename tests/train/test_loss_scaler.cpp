// Dynamic loss scaling's rules: unscaling, backoff on overflow, growth after good steps, the
// bounds of the scale, its checkpointed state, and the config keys.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/loss_scaler.hpp"
#include "tessera/train/trainer.hpp"

using namespace tessera;
using train::LossScaler;
using train::LossScalingOptions;

namespace {

LossScalingOptions options(double initial, int64_t interval) {
  LossScalingOptions o;
  o.enabled = true;
  o.initial = initial;
  o.growth_interval = interval;
  return o;
}

}  // namespace

TEST_CASE("loss scaling unscales finite gradients, backs off on overflow and grows after good steps",
          "[train][precision]") {
  LossScaler s(options(1024, 3));
  REQUIRE(s.enabled());
  CHECK(s.scale() == 1024.0f);
  Tensor g(Shape{4});
  g.copy_from_host({1024.0f, -2048.0f, 512.0f, 0.0f});
  CHECK(s.update(true, g));  // a good step: the gradients divided by the scale (powers of two: exact)
  CHECK(g.to_host() == std::vector<float>{1.0f, -2.0f, 0.5f, 0.0f});
  CHECK(s.good_steps() == 1);
  g.copy_from_host({1.0f, 2.0f, 3.0f, 4.0f});
  CHECK_FALSE(s.update(false, g));  // overflow: skipped, gradients untouched, scale halved
  CHECK(g.to_host() == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  CHECK(s.scale() == 512.0f);
  CHECK(s.good_steps() == 0);
  CHECK(s.skipped() == 1);
  for (int i = 0; i < 3; ++i) CHECK(s.update(true, g));
  CHECK(s.scale() == 1024.0f);  // grown after 3 good steps in a row
  CHECK(s.good_steps() == 0);
  // The scale stays within [1, the largest float].
  LossScaler low(options(1, 1000));
  CHECK_FALSE(low.update(false, g));
  CHECK(low.scale() == 1.0f);
  LossScaler high(options(std::numeric_limits<float>::max(), 1));
  CHECK(high.update(true, g));
  CHECK(std::isfinite(high.scale()));
  // What a checkpoint restores.
  s.restore(4096, 2);
  CHECK(s.scale() == 4096.0f);
  CHECK(s.good_steps() == 2);
  // Off: a scale of one, every step taken, gradients untouched.
  LossScaler off;
  CHECK_FALSE(off.enabled());
  CHECK(off.scale() == 1.0f);
  g.copy_from_host({8.0f, 8.0f, 8.0f, 8.0f});
  CHECK(off.update(false, g));
  CHECK(g.to_host() == std::vector<float>{8.0f, 8.0f, 8.0f, 8.0f});
}

TEST_CASE("loss_scaling keys are read with their defaults and bad values refused by key", "[train][precision]") {
  const auto read = [](const nlohmann::json& j) {
    ConfigObject cfg(j, "$.training.loss_scaling");
    return LossScalingOptions::from_json(cfg);
  };
  const LossScalingOptions d = read(nlohmann::json::object());
  CHECK(d.enabled);  // a section given turns it on
  CHECK(d.initial == 65536.0);
  CHECK(d.growth == 2.0);
  CHECK(d.backoff == 0.5);
  CHECK(d.growth_interval == 2000);
  CHECK_FALSE(read({{"enabled", false}}).enabled);
  CHECK_THROWS_WITH(read({{"initial", 0.5}}), Catch::Contains("$.training.loss_scaling.initial"));
  CHECK_THROWS_WITH(read({{"initial", 1e39}}), Catch::Contains("$.training.loss_scaling.initial"));
  CHECK_THROWS_WITH(read({{"growth", 1.0}}), Catch::Contains("$.training.loss_scaling.growth"));
  CHECK_THROWS_WITH(read({{"backoff", 1.5}}), Catch::Contains("$.training.loss_scaling.backoff"));
  CHECK_THROWS_WITH(read({{"growth_interval", 0}}), Catch::Contains("$.training.loss_scaling.growth_interval"));
  CHECK_THROWS_WITH(read({{"scale", 2}}), Catch::Contains("scale"));
  // In the training section.
  const nlohmann::json section{{"loss_scaling", {{"initial", 128}}}};  // a ConfigObject refers to its JSON
  ConfigObject training(section, "$.training");
  const auto o = train::TrainingOptions::from_json(training);
  REQUIRE(o.loss_scaling);
  CHECK(o.loss_scaling->initial == 128.0);
}
