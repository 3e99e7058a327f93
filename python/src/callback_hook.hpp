#pragma once
#include <optional>

#include <pybind11/pybind11.h>

#include "tessera/train/trainer_hook.hpp"

namespace tessera::python {

/// Calls Python functions after every step (`on_step`) and at the end of every epoch
/// (`on_epoch`, after validation) with a dict of the metrics, on every rank. The trainer runs
/// without the GIL; the hook takes it for the call. An exception a callback raises is kept and
/// a stop is requested, so every rank stops after the same step as on Ctrl-C (a rank cannot
/// leave the collectives alone); rethrow() then raises it again where it happened.
class CallbackHook final : public train::TrainerHook {
 public:
  CallbackHook(pybind11::object on_step, pybind11::object on_epoch);
  ~CallbackHook() override;
  void on_step_end(train::Trainer& trainer, const train::StepEnd& step) override;
  /// Raises the exception a callback raised, if one did.
  void rethrow();

 private:
  void call(const pybind11::object& callback, const pybind11::dict& metrics);

  pybind11::object on_step_, on_epoch_;
  std::optional<pybind11::error_already_set> error_;
};

}  // namespace tessera::python
