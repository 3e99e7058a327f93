#include "inference_model.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <set>

#include "arrays.hpp"
#include "errors.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/train/checkpoint.hpp"

namespace py = pybind11;

namespace tessera::python {

InferenceModel::InferenceModel(const std::string& config_json, const std::string& checkpoint,
                               const std::string& backend)
    : config_(nlohmann::json::parse(config_json)) {
  require_runtime();
  trained_ = std::make_unique<train::TrainedModel>(config_, checkpoint, backend);
  steps_ = trained_->trained_steps();
}

void InferenceModel::release() {
  loss_.reset();
  trained_.reset();
}

model::Model& InferenceModel::model() {
  require_runtime();
  if (!trained_) throw Error("this model was released");
  return trained_->model();
}

void InferenceModel::check_sample_shape(const py::array& x, const std::string& argument) {
  const Shape& sample = model().sample_shape();
  bool fits = x.ndim() == sample.rank() + 1;
  for (int a = 0; fits && a < sample.rank(); ++a) fits = x.shape(a + 1) == sample[a];
  if (!fits || x.shape(0) == 0)
    throw ArrayError(argument, "shape " + shape_of(x).str() + ", the model takes [N, " +
                                   sample.str().substr(1, sample.str().size() - 2) + "] with N ≥ 1 (channels-last)");
}

py::array_t<float> InferenceModel::predict(const py::handle& x_object, int64_t batch_size) {
  const py::array_t<float> x = float32_array(x_object, "x");
  check_sample_shape(x, "x");
  if (batch_size < 1) throw ConfigError("batch_size", "expected an integer ≥ 1, got " + std::to_string(batch_size));
  model::Model& m = model();
  const int64_t n = x.shape(0);
  py::array_t<float> out;
  int64_t per_row = 0;
  for (int64_t first = 0; first < n; first += batch_size) {
    const int64_t rows = std::min(batch_size, n - first);
    // With the GIL held: it is what keeps two Python threads out of one model's buffers.
    const Tensor& output = m.forward(rows_as_tensor(x, first, rows), {layers::Mode::inference, 0, rows});
    if (first == 0) {
      std::vector<py::ssize_t> dims{static_cast<py::ssize_t>(n)};
      for (int a = 1; a < output.shape().rank(); ++a) dims.push_back(output.shape()[a]);
      out = py::array_t<float>(dims);
      per_row = output.numel() / rows;
    }
    Kokkos::View<float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(out.mutable_data() + first * per_row,
                                                                                  static_cast<size_t>(rows * per_row));
    Kokkos::deep_copy(host, Kokkos::subview(output.view(), std::pair<int64_t, int64_t>(0, rows * per_row)));
  }
  return out;
}

py::dict InferenceModel::evaluate(const py::handle& x_object, const py::handle& y_object, int64_t batch_size) {
  const py::array_t<float> x = float32_array(x_object, "x"), y = float32_array(y_object, "y");
  check_sample_shape(x, "x");
  if (y.ndim() < 1 || y.shape(0) != x.shape(0))
    throw ArrayError(
        "y", "shape " + shape_of(y).str() + " does not start with the " + std::to_string(x.shape(0)) + " samples of x");
  if (batch_size < 1) throw ConfigError("batch_size", "expected an integer ≥ 1, got " + std::to_string(batch_size));
  model::Model& m = model();
  if (!loss_) {
    if (!config_.contains("loss")) throw ConfigError("$.loss", "evaluate needs the config's loss section");
    ConfigObject loss_cfg(config_.at("loss"), "$.loss");
    loss_ = layers::Loss::from_json(loss_cfg);
    loss_cfg.finish();
  }
  const int64_t n = x.shape(0), y_per_row = y.size() / n;
  layers::LossSums sums;
  for (int64_t first = 0; first < n; first += batch_size) {
    const int64_t rows = std::min(batch_size, n - first);
    const Tensor& output = m.forward(rows_as_tensor(x, first, rows), {layers::Mode::inference, 0, rows});
    const Shape target_shape = loss_->target_shape(output.shape());
    if (target_shape.numel() != rows * y_per_row)
      throw ArrayError("y", "shape " + shape_of(y).str() + ": the " + loss_->type() + " loss takes targets of " +
                                target_shape.str() + " for a batch of " + std::to_string(rows));
    const layers::LossSums batch =
        loss_->evaluate(output, rows_as_tensor(y, first, rows).reshaped(target_shape), rows, Tensor());
    sums.loss_sum += batch.loss_sum;
    sums.correct += batch.correct;
    sums.predictions += batch.predictions;
  }
  py::dict result;
  result["loss"] = sums.loss_sum / static_cast<double>(n);
  result["samples"] = n;
  if (loss_->type() != "mse" && sums.predictions > 0)
    result["accuracy"] = static_cast<double>(sums.correct) / static_cast<double>(sums.predictions);
  return result;
}

py::dict InferenceModel::state_dict(const py::object& owner, bool copy) {
  py::dict values;
  for (const auto& p : model().parameters().all()) {
    const Tensor& t = p->value;
    constexpr bool host_memory = Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible;
    if (host_memory && !copy && t.type() == ElementType::fp32) {
      std::vector<py::ssize_t> dims;
      for (int a = 0; a < t.shape().rank(); ++a) dims.push_back(t.shape()[a]);
      values[py::str(p->name)] = py::array_t<float>(dims, t.data(), owner);
    } else {
      values[py::str(p->name)] = to_numpy(t);
    }
  }
  return values;
}

void InferenceModel::load_state_dict(const py::dict& values, bool strict) {
  load_parameters(model().parameters(), values, strict);
}

void load_parameters(model::ParameterStore& store, const py::dict& values, bool strict) {
  const auto& params = store.all();
  std::set<std::string> known, missing;
  for (const auto& p : params) {
    known.insert(p->name);
    if (!values.contains(py::str(p->name))) {
      missing.insert(p->name);
      continue;
    }
    const std::string argument = "state_dict['" + p->name + "']";
    const py::array_t<float> array = float32_array(values[py::str(p->name)], argument);
    // A parameter split over the ranks (ParameterShard) is given whole, as checkpoints hold it.
    const Shape& whole = p->shard.split() ? p->shard.whole : p->value.shape();
    if (!(shape_of(array) == whole))
      throw ArrayError(argument, "shape " + shape_of(array).str() + ", the parameter is " + whole.str());
  }
  std::string unexpected;
  for (const auto& item : values) {
    const std::string name = py::str(item.first).cast<std::string>();
    if (!known.count(name)) unexpected += (unexpected.empty() ? "" : ", ") + name;
  }
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string absent;
    for (const auto& name : missing) absent += (absent.empty() ? "" : ", ") + name;
    throw Error("load_state_dict: " + (absent.empty() ? std::string() : "missing " + absent) +
                (absent.empty() || unexpected.empty() ? "" : "; ") +
                (unexpected.empty() ? std::string() : "not parameters of this model: " + unexpected) +
                " (strict=False loads what matches)");
  }
  // Checked first, copied after: a refused dict leaves the model as it was.
  for (const auto& p : params) {
    if (missing.count(p->name)) continue;
    const py::array_t<float> array = float32_array(values[py::str(p->name)], p->name);
    if (p->shard.split()) {
      const std::vector<float> part = p->shard.slice_of(std::vector<float>(array.data(), array.data() + array.size()));
      copy_into(p->value, 0, part.data(), static_cast<int64_t>(part.size()));
    } else {
      copy_into(p->value, 0, array.data(), p->value.numel());
    }
  }
}

void InferenceModel::save_checkpoint(const std::string& path) {
  model::Model& m = model();
  train::TrainingProgress progress;
  progress.step = steps_;
  progress.seed = trained_->seed();
  train::save_checkpoint(path, m.parameters(), trained_->optimizer(), progress);
}

void InferenceModel::set_trained_steps(int64_t steps) {
  if (steps < 0) throw ConfigError("trained_steps", "expected an integer ≥ 0, got " + std::to_string(steps));
  steps_ = steps;
}

py::tuple InferenceModel::sample_shape() {
  const Shape& s = model().sample_shape();
  py::tuple t(static_cast<size_t>(s.rank()));
  for (int a = 0; a < s.rank(); ++a) t[static_cast<size_t>(a)] = s[a];
  return t;
}

py::list InferenceModel::layers() {
  model::Model& m = model();
  py::list rows;
  for (const auto& row : m.layer_rows()) {
    py::dict layer;
    layer["name"] = row.name;
    layer["type"] = row.type;
    std::vector<int64_t> output = row.output.dims();
    layer["output"] = py::tuple(py::cast(std::vector<int64_t>(output.begin() + 1, output.end())));
    layer["parameters"] = row.parameters;
    layer["backend"] = row.backend;
    layer["precision"] = row.precision;
    rows.append(layer);
  }
  return rows;
}

}  // namespace tessera::python
