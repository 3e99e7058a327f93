#include "tessera/search/introspection_objective.hpp"

#include <cmath>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/model/graph_builder.hpp"
#include "tessera/model/model.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"

namespace tessera::search {

double mean_abs_channel_correlation(const std::vector<float>& values, int64_t channels) {
  if (channels < 1 || values.size() % static_cast<size_t>(channels) != 0)
    throw Error("introspection: " + std::to_string(values.size()) + " values do not hold whole positions of " +
                std::to_string(channels) + " channels");
  if (channels == 1) return 0.0;
  const auto c = static_cast<size_t>(channels);
  const size_t positions = values.size() / c;
  if (positions < 2) throw Error("introspection: correlations need at least two positions");
  std::vector<double> mean(c, 0.0);
  for (size_t p = 0; p < positions; ++p)
    for (size_t i = 0; i < c; ++i) mean[i] += values[p * c + i];
  for (double& m : mean) m /= static_cast<double>(positions);
  std::vector<double> cov(c * c, 0.0);  // upper triangle with the diagonal
  std::vector<double> centred(c);
  for (size_t p = 0; p < positions; ++p) {
    for (size_t i = 0; i < c; ++i) centred[i] = values[p * c + i] - mean[i];
    for (size_t i = 0; i < c; ++i)
      for (size_t j = i; j < c; ++j) cov[i * c + j] += centred[i] * centred[j];
  }
  double sum = 0.0;
  for (size_t i = 0; i < c; ++i)
    for (size_t j = i + 1; j < c; ++j) {
      const double vi = cov[i * c + i], vj = cov[j * c + j];
      // Relative to the channels' scale, so float noise on a dead unit does not count as signal.
      const double floor = 1e-12 * static_cast<double>(positions);
      sum += (vi <= floor || vj <= floor) ? 1.0 : std::min(1.0, std::fabs(cov[i * c + j]) / std::sqrt(vi * vj));
    }
  return sum / static_cast<double>(c * (c - 1) / 2);
}

IntrospectionObjective::IntrospectionObjective(const nlohmann::json& settings, const std::string& path) {
  ConfigObject cfg(settings, path);
  layer_ = cfg.string("layer");
  samples_ = cfg.integer_in("samples", 1, 1000000, samples_);
  cfg.finish();
}

std::vector<float> IntrospectionObjective::activations(TrainedCandidate& candidate, int64_t& channels) const {
  nlohmann::json model = candidate.config.at("model");
  nlohmann::json& layers = model["layers"];
  size_t at = layers.size();
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].value("name", std::string()) == layer_) at = i;
  if (at == layers.size()) throw ConfigError("$.introspection.layer", "this candidate has no layer '" + layer_ + "'");
  layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(at) + 1, layers.end());
  model.erase("distribution");
  for (auto& l : layers) l.erase("distribution");
  ConfigObject spec(model, "$.model");
  model::BuildOptions build;
  build.backend = candidate.backend;
  build.group = parallel::Communicator::self();
  model::Graph graph = model::build_graph(model::ModelSpec::from_json(spec), build);
  model::passes::run_all(graph);
  model::Model probe(std::move(graph));
  const model::ParameterStore& trained = candidate.run.model().parameters();
  for (const auto& p : probe.parameters().all()) {
    const layers::Parameter* source = trained.find(p->name);
    if (!source || source->value.numel() != p->value.numel())
      throw Error("introspection: the trained model has no parameter " + p->name + " of " +
                  std::to_string(p->value.numel()) + " values");
    deep_copy(p->value, source->value);
  }
  io::Dataset& data = *candidate.run.trainer().data().validation;
  const int64_t n = std::min(samples_, data.size());
  std::vector<int64_t> index(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) index[static_cast<size_t>(i)] = i;
  std::vector<int64_t> in_dims{n}, target_dims{n};
  for (const int64_t d : data.sample_shape().dims()) in_dims.push_back(d);
  for (const int64_t d : data.target_shape().dims()) target_dims.push_back(d);
  Tensor inputs(Shape(in_dims), "tessera::introspection_inputs");
  Tensor targets(Shape(target_dims), "tessera::introspection_targets");
  data.load(index, data.whole_box(), inputs, targets);
  const Tensor& out = probe.forward(inputs, {layers::Mode::inference, 0, n});
  channels = out.shape()[out.shape().rank() - 1];
  return out.to_host();
}

double IntrospectionObjective::measure(TrainedCandidate& candidate) {
  if (!candidate.run.trainer().data().validation)
    throw ConfigError("$.base.data.validation_samples", "the introspection objective needs validation samples");
  const parallel::Communicator& group = candidate.run.trainer().group();
  // One rank of the trainer measures on a copy of the model that is whole on it; the others
  // learn the result in the sum.
  double score = 0.0;
  if (group.rank() == 0) {
    int64_t channels = 0;
    const std::vector<float> values = activations(candidate, channels);
    score = mean_abs_channel_correlation(values, channels);
  }
  group.allreduce_sum(&score, 1);
  return score;
}

}  // namespace tessera::search
