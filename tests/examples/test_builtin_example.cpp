// The README's first command trains examples/cosmoflow_tiny.json; this runs the same config
// and checks that it really learns: the logged training loss falls at least 5x and the
// validation error ends far below that of predicting the mean.
#include <catch2/catch.hpp>

#include <cstdio>

#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("The built-in example learns the parameters of its random fields", "[example][slow]") {
  const auto config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow_tiny.json");
  train::RunOverrides o;
  o.progress = false;
  train::TrainingRun run(config, o);
  const auto report = run.run();
  REQUIRE(report.logged_losses.size() >= 2);
  const double first = report.logged_losses.front(), last = report.logged_losses.back();
  std::printf("example: loss %.4f -> %.4f (%.1fx), validation %.4f vs predicting the mean %.4f, %.1f samples/s\n",
              first, last, first / last, report.validation_loss, report.validation_baseline,
              report.samples_per_second);
  CHECK(first / last >= 5.0);
  CHECK(report.validation_loss < 0.3 * report.validation_baseline);
}
