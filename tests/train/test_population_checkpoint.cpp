#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "support/scratch_folder.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/ltfb/population_checkpoint.hpp"

using namespace tessera;
using namespace tessera::train;

namespace {
const tessera::testing::ScratchFolder& scratch() {
  static const tessera::testing::ScratchFolder folder("tessera_test_population");
  return folder;
}
std::string temp_path(const std::string& name) { return scratch() / ("tessera_test_" + name); }
void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
}  // namespace

TEST_CASE("A population manifest round-trips and names its trainer files by step", "[train][ltfb]") {
  const std::string path = temp_path("population.ckpt");
  PopulationManifest m;
  m.step = 40;
  m.trainers = 2;
  m.seed = 42;
  m.hyperparameter_keys = {"lr", "momentum"};
  m.files = {PopulationManifest::trainer_file(path, 40, 0), PopulationManifest::trainer_file(path, 40, 1)};
  m.hyperparameters = {{0.01, 0.9}, {0.005, 0.8}};
  CHECK(m.files[1] == path + ".step40.trainer1");
  m.write(path);
  CHECK(PopulationManifest::is_manifest(path));
  const auto r = PopulationManifest::read(path);
  CHECK(r.step == 40);
  CHECK(r.trainers == 2);
  CHECK(r.seed == 42);
  CHECK(r.hyperparameter_keys == m.hyperparameter_keys);
  CHECK(r.hyperparameters == m.hyperparameters);
  // Stored as names beside the manifest, so a moved directory still resumes.
  CHECK(r.files[0] == "tessera_test_population.ckpt.step40.trainer0");
  CHECK(PopulationManifest::beside(path, r.files[0]) == m.files[0]);
  std::remove(path.c_str());
}

TEST_CASE("Damaged population manifests are refused naming the file", "[train][ltfb]") {
  const std::string path = temp_path("bad_population.ckpt");
  auto refused = [&](const std::string& text, const std::string& message) {
    write_text(path, text);
    CHECK_THROWS_WITH(PopulationManifest::read(path), Catch::Contains(path) && Catch::Contains(message));
  };
  refused("{\"format\": \"tessera-population\", \"version\": 1", "corrupt population checkpoint");
  refused(R"({"format": "something-else", "version": 1})", "not a population checkpoint");
  refused(R"({"format": "tessera-population", "version": 1, "step": 4})", "a field is missing");
  refused(R"({"format": "tessera-population", "version": 1, "step": 4, "trainers": 2, "seed": 0,
              "hyperparameter_keys": [], "members": [{"file": "a", "hyperparameters": []}]})",
          "names 1 trainer files for 2 trainers");
  refused(R"({"format": "tessera-population", "version": 1, "step": 4, "trainers": 1, "seed": 0,
              "hyperparameter_keys": [], "members": [{"file": "../etc/x", "hyperparameters": []}]})",
          "not a plain file name");
  refused(R"({"format": "tessera-population", "version": 1, "step": 4, "trainers": 1, "seed": 0,
              "hyperparameter_keys": ["lr"], "members": [{"file": "a", "hyperparameters": []}]})",
          "0 hyper-parameters for 1 keys");
  CHECK_THROWS_WITH(PopulationManifest::read("/nonexistent/p.ckpt"), Catch::Contains("cannot open"));
  write_text(path, "TSRACKPT...");
  CHECK_FALSE(PopulationManifest::is_manifest(path));
  std::remove(path.c_str());
}
