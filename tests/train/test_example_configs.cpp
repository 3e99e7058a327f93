// Every run config shipped in examples/ must validate and build (model, loss, optimizer,
// data), so a user copying one starts from something that runs.
#include <catch2/catch.hpp>

#include <filesystem>

#include "tessera/core/config.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

TEST_CASE("Every example config validates and builds", "[train][examples]") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TESSERA_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    const auto config = read_json_file(entry.path().string());
    train::RunOverrides o;
    o.progress = false;
    train::TrainingRun run(config, o);
    CHECK(run.model().parameters().trainable_count() > 0);
    ++checked;
  }
  CHECK(checked >= 3);
}
