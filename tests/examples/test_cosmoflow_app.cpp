// examples/cosmoflow/cosmoflow_32.json at a tiny size: its network with an eighth of the
// filters (4 to 64), on generated 32^3 fields instead of files, for a few epochs. It must learn:
// the logged training loss falls by 15% and the validation MAE ends at least 10% below that of
// predicting the mean (measured: 30% and 20%).
#include <catch2/catch.hpp>

#include <cstdio>

#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("The CosmoFlow app's network learns the parameters of small fields", "[example][cosmoflow]") {
  auto config = read_json_file(std::string(TESSERA_SOURCE_DIR) + "/examples/cosmoflow/cosmoflow_32.json");
  for (auto& layer : config["model"]["layers"])
    if (layer["type"] == "conv3d") layer["filters"] = layer["filters"].get<int>() / 8;
  config["data"] = {
      {"source", "synthetic_fields"}, {"samples", 256}, {"validation_samples", 64}, {"size", 32}, {"channels", 4}};
  config["training"]["epochs"] = 6;
  train::RunOverrides o;
  o.progress = false;
  train::TrainingRun run(config, o);
  const auto report = run.run();
  REQUIRE(report.logged_losses.size() >= 2);
  const double first = report.logged_losses.front(), last = report.logged_losses.back();
  const auto& m = report.validation_metrics;
  std::printf(
      "cosmoflow app (tiny): loss %.4f -> %.4f, validation MAE %.4f vs predicting the mean %.4f, %.1f samples/s\n",
      first, last, m.mae, m.baseline_mae, report.samples_per_second);
  CHECK(last < 0.85 * first);
  CHECK(m.mae < 0.9 * m.baseline_mae);
}
