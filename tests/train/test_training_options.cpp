// The "training" section's keys that TrainingOptions reads, as a run config gives them.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/trainer.hpp"

using namespace tessera;

namespace {

train::TrainingOptions read(const nlohmann::json& section) {
  ConfigObject cfg(section, "$.training");
  return train::TrainingOptions::from_json(cfg);
}

}  // namespace

TEST_CASE("gradient sums travel in fp32 unless bf16 is asked for; fp16 is refused naming the key",
          "[train][precision]") {
  CHECK(read(nlohmann::json::object()).gradient_precision == ElementType::fp32);
  CHECK(read({{"gradient_precision", "bf16"}}).gradient_precision == ElementType::bf16);
  CHECK(read({{"gradient_precision", "fp32"}}).gradient_precision == ElementType::fp32);
  CHECK_THROWS_WITH(read({{"gradient_precision", "fp16"}}),
                    Catch::Contains("$.training.gradient_precision") && Catch::Contains("would overflow above 65504"));
  CHECK_THROWS_WITH(read({{"gradient_precision", "half"}}), Catch::Contains("$.training.gradient_precision"));
}
