#pragma once
#include <memory>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "runtime.hpp"
#include "tessera/layers/loss.hpp"
#include "tessera/train/trained_model.hpp"

namespace tessera::python {

/// What tessera.Model is in C++: a run config's model on this process alone (its
/// distributions dropped, as `tessera predict` runs it), with the parameters the config's seed
/// initialises or a checkpoint holds, for inference, evaluation and moving weights in and out.
/// Its calls keep the GIL, so Python threads that share a model take turns.
class InferenceModel final : public RuntimeResource {
 public:
  InferenceModel(const std::string& config_json, const std::string& checkpoint, const std::string& backend);
  void release() override;

  /// The model's output for inputs `x` [N, ...sample_shape], in batches of `batch_size`.
  pybind11::array_t<float> predict(const pybind11::handle& x, int64_t batch_size);
  /// {"loss", "samples"[, "accuracy"]} of the config's loss on (x, y), as validation computes
  /// them: the mean per-sample loss, and for classification losses the share of right answers.
  pybind11::dict evaluate(const pybind11::handle& x, const pybind11::handle& y, int64_t batch_size);
  /// Every parameter and buffer by name, in declaration order: views of the model's memory
  /// (kept alive by `owner`) where it is the host's, copies otherwise or when `copy`.
  pybind11::dict state_dict(const pybind11::object& owner, bool copy);
  /// Sets parameters and buffers from `values` (name → float32 array of the parameter's shape);
  /// with `strict`, every parameter must be given and nothing else.
  void load_state_dict(const pybind11::dict& values, bool strict);
  /// Writes a checkpoint `tessera predict` and `tessera train --resume` read (atomically).
  void save_checkpoint(const std::string& path);
  /// Steps the parameters were trained for: the checkpoint's, or what the training run that
  /// made them set; a saved checkpoint records it.
  int64_t trained_steps() const { return steps_; }
  void set_trained_steps(int64_t steps);
  /// Per-sample input shape, channels-last.
  pybind11::tuple sample_shape();
  /// One dict per layer: name, type, output (for one sample), parameters, backend, precision.
  pybind11::list layers();

 private:
  model::Model& model();
  void check_sample_shape(const pybind11::array& x, const std::string& argument);

  nlohmann::json config_;
  std::unique_ptr<train::TrainedModel> trained_;
  std::unique_ptr<layers::Loss> loss_;
  int64_t steps_ = 0;
};

/// Sets the parameters and buffers of `store` from `values` (name → float32 array of the
/// parameter's whole shape; a rank holding a part of it takes its part); with `strict`, every
/// parameter must be given and nothing else. Checks everything before it copies anything.
void load_parameters(model::ParameterStore& store, const pybind11::dict& values, bool strict);

}  // namespace tessera::python
