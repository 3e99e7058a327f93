#include "training_call.hpp"

#include <memory>

#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "array_dataset.hpp"
#include "arrays.hpp"
#include "batch_stream.hpp"
#include "callback_hook.hpp"
#include "errors.hpp"
#include "inference_model.hpp"
#include "runtime.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/train/training_run.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

/// The overrides `options` holds; a key this function does not know is a ConfigError (the
/// package passes only known ones, so this catches mistakes in it).
train::RunOverrides overrides_of(const py::dict& options) {
  train::RunOverrides o;
  for (const auto& item : options) {
    const std::string key = py::str(item.first).cast<std::string>();
    const py::handle value = item.second;
    if (value.is_none()) continue;
    auto integer = [&]() {
      if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        throw ConfigError(key, "expected an integer, got " + py::repr(value).cast<std::string>());
      return value.cast<int64_t>();
    };
    if (key == "epochs")
      o.epochs = integer();
    else if (key == "batch_size")
      o.batch_size = integer();
    else if (key == "accumulate")
      o.accumulate = integer();
    else if (key == "max_steps")
      o.max_steps = integer();
    else if (key == "checkpoint_every")
      o.checkpoint_every = integer();
    else if (key == "seed") {
      const int64_t seed = integer();
      if (seed < 0) throw ConfigError("seed", "expected an integer ≥ 0, got " + std::to_string(seed));
      o.seed = static_cast<uint64_t>(seed);
    } else if (key == "checkpoint")
      o.checkpoint_file = value.cast<std::string>();
    else if (key == "resume")
      o.resume_file = value.cast<std::string>();
    else if (key == "metrics")
      o.metrics_file = value.cast<std::string>();
    else if (key == "backend")
      o.backend = value.cast<std::string>();
    else if (key == "precision")
      o.precision = value.cast<std::string>();
    else if (key == "progress")
      o.progress = value.cast<bool>();
    else if (key == "profile")
      o.profile = value.cast<bool>();
    else
      throw ConfigError(key, "not an option of tessera.train");
  }
  return o;
}

/// The trained parameters and buffers, whole, as numpy copies. A parameter split over the
/// ranks (a channel or filter split, sharded weights) is gathered, as a checkpoint gathers it:
/// a collective, in the same order on every rank.
void add_state(py::dict& result, const model::ParameterStore& params) {
  py::dict state;
  for (const auto& p : params.all()) {
    if (!p->shard.split()) {
      state[py::str(p->name)] = to_numpy(p->value);
      continue;
    }
    const std::vector<float> whole = p->shard.gather_whole(p->value.to_host());
    const std::vector<int64_t> dims = p->shard.whole.dims();
    py::array_t<float> array(std::vector<py::ssize_t>(dims.begin(), dims.end()));
    std::copy(whole.begin(), whole.end(), array.mutable_data());
    state[py::str(p->name)] = array;
  }
  result["state"] = state;
}

}  // namespace

py::dict train_run(const std::string& config_json, const py::object& x, const py::object& y, const py::object& x_val,
                   const py::object& y_val, const py::object& stream, const py::dict& options,
                   const py::object& initial_state, const py::object& on_step, const py::object& on_epoch) {
  require_runtime();
  const nlohmann::json config = nlohmann::json::parse(config_json);
  train::RunOverrides o = overrides_of(options);
  o.keyword_names = true;
  std::unique_ptr<ArrayDataset> validation;
  if (!x_val.is_none()) validation = std::make_unique<ArrayDataset>(x_val, y_val, "validation x", "validation y");
  if (!x.is_none()) {
    o.extension = std::make_shared<ArrayData>(std::make_unique<ArrayDataset>(x, y, "x", "y"), std::move(validation));
  } else if (!stream.is_none()) {
    const auto parts = stream.cast<py::tuple>();
    StreamSpec spec{parts[0], parts[1], parts[2], parts[3].cast<int64_t>()};
    if (spec.steps_per_epoch < 1)
      throw ConfigError("steps_per_epoch", "expected an integer ≥ 1, got " + std::to_string(spec.steps_per_epoch));
    o.extension = std::make_shared<BatchStream>(std::move(spec), std::move(validation));
  }
  const StopSignalHandlers signals(StopMode::after_step);
  clear_stop_request();
  auto run = std::make_unique<train::TrainingRun>(config, o);
  if (!initial_state.is_none()) load_parameters(run->model().parameters(), initial_state.cast<py::dict>(), true);
  auto owned_hook = std::make_unique<CallbackHook>(on_step, on_epoch);
  CallbackHook& hook = *owned_hook;
  run->trainer().add_hook(std::move(owned_hook));
  if (o.progress) {
    log::info(run->model().summary());
    log::info(run->describe());
  }
  train::TrainingReport report;
  {
    py::gil_scoped_release unlocked;
    report = run->run();
  }
  hook.rethrow();

  py::dict result;
  result["steps"] = report.steps;
  result["step_losses"] = report.step_losses;
  result["logged_losses"] = report.logged_losses;
  result["samples_per_second"] = report.samples_per_second;
  result["peak_rss_mb_max_rank"] = report.peak_rss_mb_max_rank;
  if (report.validation_loss >= 0) result["validation_loss"] = report.validation_loss;
  if (report.validation_baseline >= 0) result["validation_baseline"] = report.validation_baseline;
  if (report.validation_accuracy >= 0) result["validation_accuracy"] = report.validation_accuracy;
  nlohmann::json metrics = nlohmann::json::object();
  report.validation_metrics.add_to(metrics);
  result["validation_metrics_json"] = metrics.dump();
  result["stop_signal"] =
      report.stop_signal == 0 ? py::object(py::none()) : py::object(py::str(signal_name(report.stop_signal)));
  result["exit_status"] = report.stop_signal == 0 ? 0 : stop_exit_code(report.stop_signal);
  result["checkpoint"] = run->options().checkpoint_file.empty() ? py::object(py::none())
                                                                : py::object(py::str(run->options().checkpoint_file));
  add_state(result, run->model().parameters());
  run.reset();  // the datasets hold numpy arrays: freed with the GIL held
  return result;
}

}  // namespace tessera::python
