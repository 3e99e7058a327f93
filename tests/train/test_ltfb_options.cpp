#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tessera/core/error.hpp"
#include "tessera/train/ltfb/ltfb_options.hpp"

using namespace tessera;
using namespace tessera::train;

namespace {
LtfbOptions read(const nlohmann::json& j, int64_t trainers_flag = 0) {
  ConfigObject cfg(j, "$.training.ltfb");
  return LtfbOptions::from_json(cfg, 16, trainers_flag);
}
}  // namespace

TEST_CASE("The ltfb section's defaults and keys", "[train][ltfb]") {
  const auto d = read(nlohmann::json::object());
  CHECK(d.trainers == 1);
  CHECK(d.round_steps == 10);
  CHECK(d.start_step == 0);
  CHECK(d.tournament_samples == 16);  // the batch
  CHECK(d.selection == Selection::pairwise);
  CHECK_FALSE(d.higher_is_better);
  const auto o = read(nlohmann::json::parse(R"({"trainers": 4, "round_steps": 5, "tournament_samples": 32,
      "selection": "truncation", "truncation_count": 2, "metric": "accuracy", "perturb": true,
      "hyperparameters": {"lr": {"min": 0.001, "max": 0.1, "scale": "log"}, "momentum": {"min": 0.5, "max": 0.95}}})"));
  CHECK(o.trainers == 4);
  CHECK(o.selection_name() == "truncation");
  CHECK(o.truncation_count == 2);
  CHECK(o.higher_is_better);
  REQUIRE(o.hyperparameters.size() == 2);
  CHECK(o.hyperparameters[0].key == "lr");
  CHECK(o.hyperparameters[0].log_scale);
  CHECK(o.hyperparameters[1].max == 0.95);
  CHECK(read(nlohmann::json{{"trainers", 2}}, 6).trainers == 6);  // --trainers wins
}

TEST_CASE("Bad ltfb sections are refused naming the key", "[train][ltfb]") {
  using nlohmann::json;
  auto fails = [](const char* text, const std::string& message) {
    CHECK_THROWS_WITH(read(json::parse(text)), Catch::Contains(message));
  };
  fails(R"({"trainers": 0})", "$.training.ltfb.trainers");
  fails(R"({"round_steps": 0})", "$.training.ltfb.round_steps");
  fails(R"({"start_step": -1})", "$.training.ltfb.start_step");
  fails(R"({"tournament_samples": 0})", "$.training.ltfb.tournament_samples");
  fails(R"({"selection": "roulette"})", "$.training.ltfb.selection");
  fails(R"({"trainers": 3, "selection": "truncation", "truncation_count": 2})",
        "need 2 × truncation_count <= trainers");
  fails(R"({"perturb": true})", "names none");
  fails(R"({"hyperparameters": {"lr": {"min": 0.1, "max": 0.01}}})", "is empty: max must be at least min");
  fails(R"({"hyperparameters": {"lr": {"min": -0.1, "max": 0.01}}})", "$.training.ltfb.hyperparameters.lr.min");
  fails(R"({"hyperparameters": {"lr": {"min": 0.1, "max": 1e300}}})",
        "$.training.ltfb.hyperparameters.lr.max: must be at most 1e6");
  fails(R"({"hyperparameters": {"lr": {"min": 0, "max": 0.1, "scale": "log"}}})", "a log scale needs min > 0");
  fails(R"({"hyperparameters": {"lr": [0.1, 0.2]}})", "hyperparameters.lr: expected an object");
  fails(R"({"hyperparameters": {"lr": {"min": 0.1, "max": 0.2, "step": 1}}})", "step");
  fails(R"({"trainer": 2})", "trainer");
}
