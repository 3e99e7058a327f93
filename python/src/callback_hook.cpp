#include "callback_hook.hpp"

#include <csignal>

#include "tessera/core/stop_request.hpp"
#include "tessera/train/trainer.hpp"

namespace py = pybind11;

namespace tessera::python {

CallbackHook::CallbackHook(py::object on_step, py::object on_epoch)
    : on_step_(std::move(on_step)), on_epoch_(std::move(on_epoch)) {}

CallbackHook::~CallbackHook() {
  py::gil_scoped_acquire locked;
  on_step_ = py::object();
  on_epoch_ = py::object();
  error_.reset();
}

void CallbackHook::call(const py::object& callback, const py::dict& metrics) {
  if (error_) return;
  try {
    callback(metrics);
  } catch (py::error_already_set& e) {
    error_.emplace(std::move(e));
    request_stop(SIGINT);
  }
}

void CallbackHook::on_step_end(train::Trainer& trainer, const train::StepEnd& step) {
  const bool step_call = !on_step_.is_none(), epoch_call = step.epoch_end && !on_epoch_.is_none();
  if (!step_call && !epoch_call) return;
  py::gil_scoped_acquire locked;
  py::dict metrics;
  metrics["step"] = step.step;
  metrics["epoch"] = step.epoch;
  metrics["loss"] = step.loss;
  metrics["lr"] = step.lr;
  metrics["last_step"] = step.last_step;
  metrics["skipped"] = step.skipped;
  if (step.window_end) metrics["samples_per_second"] = step.window_samples_per_s;
  if (step_call) call(on_step_, metrics);
  if (epoch_call) {
    const train::TrainingReport& report = trainer.report();
    if (report.validation_loss >= 0) metrics["validation_loss"] = report.validation_loss;
    if (report.validation_baseline >= 0) metrics["validation_baseline"] = report.validation_baseline;
    if (report.validation_accuracy >= 0) metrics["validation_accuracy"] = report.validation_accuracy;
    call(on_epoch_, metrics);
  }
}

void CallbackHook::rethrow() {
  if (!error_) return;
  py::error_already_set error = std::move(*error_);
  error_.reset();
  throw error;
}

}  // namespace tessera::python
