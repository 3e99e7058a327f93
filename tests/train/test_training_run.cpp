// TrainingRun reads a run config section by section; sections that may be left out read as
// empty ones.
#include <catch2/catch.hpp>

#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("A run config without a training section trains with the defaults", "[train][config]") {
  auto config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow_tiny.json");
  config.erase("training");
  config["data"]["samples"] = 16;
  config["data"]["validation_samples"] = 0;
  config["optimizer"].erase("schedule");  // its warm-up is longer than two steps
  train::RunOverrides o;
  o.progress = false;
  // The empty section stands in for the missing one for as long as it is read (an address
  // sanitizer build catches a temporary that is gone before that).
  train::TrainingRun run(config, o);
  CHECK(run.options().epochs == 1);
  CHECK(run.options().batch_size == 8);
  CHECK(run.options().seed == 0);
  CHECK(run.options().log_every == 10);
}
