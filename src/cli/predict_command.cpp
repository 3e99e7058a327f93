// `tessera predict`: a trained model's output for one sample of a data file, written as a data
// file: per-voxel probabilities (or values) for tools such as `tessera score --components`.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/json_reader.hpp"
#include "tessera/core/log.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/io/normalization.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/train/trained_model.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/hdf5_sample_array.hpp"
#include "tessera/io/hdf5_writer.hpp"
#endif

namespace tessera::cli {

CLI::App* add_predict_command(CLI::App& app, PredictArgs& a) {
  auto* cmd = app.add_subcommand(
      "predict",
      "Run a trained model on one sample of a data file and write its per-voxel output as a data file: "
      "'predictions' [D, H, W, K] holds class probabilities (softmax_cross_entropy), object probabilities "
      "(sigmoid_cross_entropy) or the values (mse); 'targets' the most likely class (or the values' first "
      "channel); 'inputs' the sample as the model read it. A fully convolutional model runs at the sample's size, "
      "whatever size it was trained at.");
  cmd->add_option("config", a.config, "The run config the model was trained with")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--checkpoint", a.checkpoint, "Checkpoint of that run")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input", a.input, "Data file holding the sample")->required()->check(CLI::ExistingFile);
  cmd->add_option("--sample", a.sample, "The sample of a file that holds several, from 0")
      ->capture_default_str()
      ->check(integer_in(0, kMaxCount));
  cmd->add_option("--output", a.output, "Data file to write (atomically)")->required();
  cmd->add_option("--backend", a.backend, "Op backend (auto, onednn, kokkos, cudnn)")->capture_default_str();
  return cmd;
}

#ifdef TESSERA_HAVE_HDF5
namespace {

/// The model's output turned into what the loss says it means, in place; K channels per voxel.
void to_probabilities(std::vector<float>& out, int64_t k, const std::string& loss) {
  if (loss == "sigmoid_cross_entropy") {
    for (auto& v : out) v = 1.0f / (1.0f + std::exp(-v));
  } else if (loss == "softmax_cross_entropy") {
    for (size_t i = 0; i < out.size(); i += static_cast<size_t>(k)) {
      const float top = *std::max_element(out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(i) + k);
      float sum = 0;
      for (int64_t c = 0; c < k; ++c)
        sum += out[i + static_cast<size_t>(c)] = std::exp(out[i + static_cast<size_t>(c)] - top);
      for (int64_t c = 0; c < k; ++c) out[i + static_cast<size_t>(c)] /= sum;
    }
  }
}

/// The sample the config's model was trained on: channels and (D, H, W).
struct ModelInput {
  int64_t channels = 0;
  std::array<int64_t, 3> size{};
};

ModelInput model_input_of(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("model") || !config.at("model").is_object())
    throw ConfigError("$.model", "the config has no model section");
  nlohmann::json model_json = config.at("model");
  ConfigObject cfg(model_json, "$.model");
  const Shape sample = model::ModelSpec::from_json(cfg).sample_shape;
  if (sample.rank() != 4)
    throw ConfigError("$.model.input",
                      "predict writes per-voxel outputs of a 3D model; this model's sample is " + sample.str());
  return {sample[3], {sample[0], sample[1], sample[2]}};
}

/// The trained model rebuilt for the input's size; where the input is the cause of an error
/// (its channels, a size the model cannot take), the error names `input` first.
std::unique_ptr<train::TrainedModel> model_for_input(const nlohmann::json& config, const PredictArgs& a,
                                                     const Shape& in, const std::string& input) {
  const ModelInput trained_on = model_input_of(config);
  if (trained_on.channels != in[3])
    throw ConfigError(input, format("holds %lld channel(s) per voxel; the model takes %lld ($.model.input.channels)",
                                    static_cast<long long>(in[3]), static_cast<long long>(trained_on.channels)));
  const std::array<int64_t, 3> size{in[0], in[1], in[2]};
  try {
    return std::make_unique<train::TrainedModel>(config, a.checkpoint, a.backend, size);
  } catch (const Error& e) {
    if (size == trained_on.size) throw;
    throw ConfigError(
        input, format("a volume of %lld x %lld x %lld voxels, where the model was trained on %lld x "
                      "%lld x %lld ($.model.input.size), does not fit it: %s",
                      static_cast<long long>(size[0]), static_cast<long long>(size[1]), static_cast<long long>(size[2]),
                      static_cast<long long>(trained_on.size[0]), static_cast<long long>(trained_on.size[1]),
                      static_cast<long long>(trained_on.size[2]), e.what()));
  }
}

}  // namespace
#endif

int run_predict(const PredictArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw io::hdf5_missing("predict");
#else
  if (parallel::Communicator::world().rank() != 0) return 0;  // one process's work
  require_writable_location(a.output, "--output (the predictions)");
  const nlohmann::json config = read_json_file(a.config);
  const io::SampleArray in = io::read_sample_array(a.input, "inputs", a.sample);
  const std::string input = "--input " + a.input + " (dataset 'inputs', sample " + std::to_string(a.sample) + ")";
  if (in.shape.rank() != 4)
    throw ConfigError(input, "a sample [D, H, W, C] was expected, the file holds " + in.shape.str());
  const std::unique_ptr<train::TrainedModel> loaded = model_for_input(config, a, in.shape, input);
  train::TrainedModel& trained = *loaded;
  model::Model& m = trained.model();
  Tensor x(Shape{1, in.shape[0], in.shape[1], in.shape[2], in.shape[3]}, "tessera::predict_input");
  const std::vector<float> host =
      io::normalize_on_host(in.values, in.shape[3], io::Normalization::of_run_config(config), "$.data.normalize",
                            a.input + ": dataset 'inputs'");
  x.copy_from_host(host);
  const Tensor& y = m.forward(x, {layers::Mode::inference, 0, 1});
  const Shape out_shape = y.shape();
  if (out_shape.rank() != 5 || out_shape[1] != in.shape[0] || out_shape[2] != in.shape[1] ||
      out_shape[3] != in.shape[2])
    throw ConfigError("$.model", "predict writes per-voxel outputs; this model's output is " + out_shape.str());
  const int64_t k = out_shape[4];
  std::vector<float> out = y.to_host();
  const std::string loss = config.contains("loss") ? config["loss"].value("type", std::string()) : std::string();
  to_probabilities(out, k, loss);
  std::vector<float> labels(out.size() / static_cast<size_t>(k));
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto first = out.begin() + static_cast<long>(i * static_cast<size_t>(k));
    labels[i] = loss == "softmax_cross_entropy"   ? static_cast<float>(std::max_element(first, first + k) - first)
                : loss == "sigmoid_cross_entropy" ? (*first >= 0.5f ? 1.0f : 0.0f)
                                                  : *first;
  }
  io::SampleSchema schema;
  schema.input = in.shape;
  schema.target = Shape{in.shape[0], in.shape[1], in.shape[2]};
  schema.targets_per_voxel = true;
  schema.extras.push_back({"predictions", Shape{in.shape[0], in.shape[1], in.shape[2], k}, io::ElementType::float32});
  io::Hdf5SampleWriter::Options options;
  options.stacked = false;
  io::Hdf5SampleWriter writer(a.output, schema, 1, options);
  writer.write(0, host.data(), labels.data(), {out.data()});
  writer.set_attribute("generator", "tessera predict " + a.config + " (checkpoint " + a.checkpoint + ")");
  writer.commit();
  log::info(format("predict: %s sample %lld through %s (step %lld) -> %s, predictions [%lld, %lld, %lld, %lld]",
                   a.input.c_str(), static_cast<long long>(a.sample), a.checkpoint.c_str(),
                   static_cast<long long>(trained.trained_steps()), a.output.c_str(),
                   static_cast<long long>(in.shape[0]), static_cast<long long>(in.shape[1]),
                   static_cast<long long>(in.shape[2]), static_cast<long long>(k)));
  return 0;
#endif
}

}  // namespace tessera::cli
