#include "tessera/train/trained_model.hpp"

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/checkpoint.hpp"
#include "tessera/train/parameter_tensor_layout.hpp"

namespace tessera::train {

TrainedModel::TrainedModel(const nlohmann::json& config, const std::string& checkpoint, const std::string& backend,
                           const std::optional<std::array<int64_t, 3>>& input_size) {
  if (!config.is_object() || !config.contains("model") || !config.at("model").is_object())
    throw ConfigError("$.model", "the config has no model section");
  nlohmann::json model_json = config.at("model");
  model_json.erase("distribution");
  if (input_size) {
    if (!model_json.contains("input") || !model_json["input"].is_object())
      throw ConfigError("$.model.input", "the model has no input section to resize");
    model_json["input"]["size"] = {(*input_size)[0], (*input_size)[1], (*input_size)[2]};
  }
  ConfigObject model_cfg(model_json, "$.model");
  const model::ModelSpec spec = model::ModelSpec::from_json(model_cfg);
  model::BuildOptions build;
  build.backend = backend;
  build.group = parallel::Communicator::self();
  // Without a checkpoint the model keeps the parameters its training started from.
  if (config.contains("training") && config.at("training").contains("seed") &&
      config["training"]["seed"].is_number_unsigned())
    seed_ = config["training"]["seed"].get<uint64_t>();
  build.seed = seed_;
  model::Graph graph = model::build_graph(spec, build);
  model::passes::run_all(graph);
  model_ = std::make_unique<model::Model>(std::move(graph));
  const nlohmann::json optimizer_json =
      config.contains("optimizer") ? config.at("optimizer") : nlohmann::json::object();
  optimizer_ = optim::OptimizerSection(optimizer_json).make_optimizer();
  optimizer_->set_tensors(parameter_tensor_layout(model_->parameters()));
  optimizer_->bind(model_->parameters().values(), model_->parameters().grads());
  if (!checkpoint.empty()) steps_ = load_checkpoint(checkpoint, model_->parameters(), *optimizer_).step;
}

TrainedModel::~TrainedModel() = default;

}  // namespace tessera::train
