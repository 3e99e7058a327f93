// Fuzz target: a checkpoint file as `tessera train --resume` reads it, into the model and
// optimizer of fuzz/checkpoint_run.json (whose checkpoint is the seed input). The magic, the
// header length, every header field, the tensor list, the payload, its checksum and its
// values are checked before anything is restored, so bad input must end in a tessera::Error.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_environment.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/model/model.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/train/checkpoint.hpp"

#ifndef TESSERA_FUZZ_CHECKPOINT_RUN
#error "TESSERA_FUZZ_CHECKPOINT_RUN must name fuzz/checkpoint_run.json"
#endif

namespace {

/// The model and optimizer that checkpoints are restored into, made once per process.
struct Target {
  std::unique_ptr<tessera::model::Model> model;
  std::unique_ptr<tessera::optim::Optimizer> optimizer;

  Target() {
    using namespace tessera;
    nlohmann::json run = read_json_file(TESSERA_FUZZ_CHECKPOINT_RUN);
    ConfigObject root(run, "$");
    auto section = root.object("model");
    model::BuildOptions options;
    options.backend = "kokkos";
    model = model::Model::from_json(section, options);
    optimizer = optim::OptimizerSection(run.at("optimizer")).make_optimizer();
    optimizer->bind(model->parameters().values(), model->parameters().grads());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& environment = tessera::fuzz::FuzzEnvironment::get();
  tessera::log::set_rank(1);
  static Target target;  // after the environment, so destroyed before Kokkos is finalised
  const std::string file = environment.write("input.ckpt", data, size);
  try {
    tessera::train::load_checkpoint(file, target.model->parameters(), *target.optimizer);
  } catch (const tessera::Error&) {
    // Rejected with a message naming the file and the problem: the expected outcome.
  }
  return 0;
}
