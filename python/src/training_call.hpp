#pragma once
#include <string>

#include <pybind11/pybind11.h>

namespace tessera::python {

/// tessera.train's C++ half: a TrainingRun of the config (`config_json`) with the command
/// line's overrides taken from `options` (epochs, batch_size, accumulate, max_steps, seed,
/// checkpoint, checkpoint_every, resume, metrics, backend, precision, progress, profile), its
/// data from numpy arrays (x, y; x_val, y_val for validation) where x is not None, or from an
/// iterable of batches where `stream` is (iterable, first x, first y, steps per epoch), its
/// parameters from `initial_state` where that is not None, and the callbacks called after
/// each step and epoch. Stop signals (Ctrl-C) end it after the current step, as in the
/// command. Returns the report as a dict, with "state": the trained parameters and buffers by
/// name (whole copies, split parameters gathered).
pybind11::dict train_run(const std::string& config_json, const pybind11::object& x, const pybind11::object& y,
                         const pybind11::object& x_val, const pybind11::object& y_val, const pybind11::object& stream,
                         const pybind11::dict& options, const pybind11::object& initial_state,
                         const pybind11::object& on_step, const pybind11::object& on_epoch);

}  // namespace tessera::python
