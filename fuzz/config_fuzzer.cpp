// Fuzz target: a run config as `tessera train` reads it. The bytes are the config file; it goes
// through the guarded JSON reader (depth and duplicate-key limits), then, for a whole run
// config, the "training", "loss" and "optimizer" sections and the model; a file without
// "model" is read as a model section by itself. The model is validated and its graph built
// and rewritten, which checks every shape without allocating a tensor. The "data" section is
// left out: it names files to open, which the sample-list and HDF5 targets cover.
// Tessera's own errors (tessera::Error and its subclasses) are the expected outcome of bad
// input; anything else escapes and is reported by the fuzzer.
#include <cstddef>
#include <cstdint>

#include "fuzz_environment.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/train/trainer.hpp"

namespace {

void build_model(tessera::ConfigObject& section, uint64_t seed) {
  using namespace tessera::model;
  BuildOptions options;
  options.seed = seed;
  Graph graph = build_graph(ModelSpec::from_json(section), options);
  passes::run_all(graph);
}

void read_config(const std::string& file) {
  using namespace tessera;
  nlohmann::json json = read_json_file(file);
  ConfigObject root(json, "$");
  if (!root.has("model")) {
    build_model(root, 0);
    return;
  }
  root.string("name", "");
  root.string("description", "");
  // A missing section reads as an empty one; ConfigObject keeps a reference to its JSON, so
  // the empty object must outlive it (a temporary would dangle after this statement).
  const nlohmann::json no_training = nlohmann::json::object();
  auto training = root.has("training") ? root.object("training") : ConfigObject(no_training, "$.training");
  const auto options = train::TrainingOptions::from_json(training);
  auto model = root.object("model");
  build_model(model, options.seed);
  if (root.has("loss")) {
    auto loss = root.object("loss");
    layers::Loss::from_json(loss);
    loss.finish();
  }
  if (root.has("optimizer")) {
    // The trainer reads the section with the run's length and global batch; any will do.
    optim::OptimizerSection::read(root.raw().at("optimizer"), 1000, options.batch_size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& environment = tessera::fuzz::FuzzEnvironment::get();
  // Graph passes log each rewrite from rank 0; a fuzzer runs millions.
  tessera::log::set_rank(1);
  const std::string file = environment.write("config.json", data, size);
  try {
    read_config(file);
  } catch (const tessera::Error&) {
    // Rejected with a message naming the problem: the expected outcome.
  }
  return 0;
}
