#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/search/introspection_objective.hpp"
#include "tessera/search/objective.hpp"

using namespace tessera;
using namespace tessera::search;

TEST_CASE("Mean absolute channel correlation of hand-worked activations", "[search][objective]") {
  // Channels-last: each position holds (c0, c1).
  // Identical channels: 1. Opposite channels: |−1| = 1.
  CHECK(mean_abs_channel_correlation({1, 1, 2, 2, 3, 3, 4, 4}, 2) == Approx(1.0));
  CHECK(mean_abs_channel_correlation({1, 4, 2, 3, 3, 2, 4, 1}, 2) == Approx(1.0));
  // (1,−1,1,−1) against (1,1,−1,−1): uncorrelated.
  CHECK(mean_abs_channel_correlation({1, 1, -1, 1, 1, -1, -1, -1}, 2) == Approx(0.0).margin(1e-12));
  // Three channels: c0 = (1,−1,1,−1), c1 = (1,1,−1,−1), c2 = c0 + c1 = (2,0,0,−2):
  // r01 = 0, r02 = r12 = 1/√2; the mean is √2/3.
  CHECK(mean_abs_channel_correlation({1, 1, 2, -1, 1, 0, 1, -1, 0, -1, -1, -2}, 3) == Approx(std::sqrt(2.0) / 3.0));
  // A constant (dead) channel counts as fully correlated; one channel has no pairs.
  CHECK(mean_abs_channel_correlation({1, 0, 2, 0, 3, 0}, 2) == Approx(1.0));
  CHECK(mean_abs_channel_correlation({1, 2, 3}, 1) == 0.0);
  CHECK_THROWS_AS(mean_abs_channel_correlation({1, 2, 3}, 2), Error);
}

TEST_CASE("Objectives are made by name; unknown names and missing settings are refused", "[search][objective]") {
  CHECK(make_objective("validation_loss", {}, "$.objectives[0]")->name() == "validation_loss");
  CHECK(make_objective("flops", {}, "$.objectives[1]")->name() == "flops");
  CHECK(make_objective("introspection", {{"layer", "a1"}}, "$.objectives[1]")->name() == "introspection");
  CHECK_THROWS_WITH(make_objective("beauty", {}, "$.objectives[2]"),
                    Catch::Contains("$.objectives[2]: unknown objective \"beauty\" (known: validation_loss"));
  CHECK_THROWS_WITH(make_objective("introspection", nlohmann::json::object(), "$.objectives[1]"),
                    Catch::Contains("needs an \"introspection\" section"));
  CHECK_THROWS_WITH(make_objective("introspection", {{"layer", "a1"}, {"sample", 3}}, "$.objectives[1]"),
                    Catch::Contains("$.introspection.sample"));
}
