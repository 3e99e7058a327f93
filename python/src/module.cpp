// tessera._tessera: the compiled half of the Python package (python/tessera/ is the other).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "errors.hpp"
#include "inference_model.hpp"
#include "runtime.hpp"
#include "tessera/build_info.hpp"
#include "tessera/parallel/communicator.hpp"
#include "training_call.hpp"

namespace py = pybind11;
using tessera::python::InferenceModel;

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's C++ library for Python; use the tessera package, which wraps it.";
  tessera::python::register_error_translation();
  tessera::python::start_runtime();
  m.def("_shutdown", &tessera::python::stop_runtime,
        "Frees every model, finalises Kokkos and MPI where tessera started it (registered with atexit)");
  m.def(
      "rank", [] { return tessera::parallel::Communicator::world().rank(); }, "This process's MPI rank");
  m.def(
      "ranks", [] { return tessera::parallel::Communicator::world().size(); }, "The number of MPI ranks");
  m.attr("version") = TESSERA_VERSION;

  py::class_<InferenceModel>(m, "Model")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("config_json"),
           py::arg("checkpoint"), py::arg("backend"))
      .def("predict", &InferenceModel::predict, py::arg("x"), py::arg("batch_size"))
      .def("evaluate", &InferenceModel::evaluate, py::arg("x"), py::arg("y"), py::arg("batch_size"))
      .def(
          "state_dict", [](py::object self, bool copy) { return self.cast<InferenceModel&>().state_dict(self, copy); },
          py::arg("copy"))
      .def("load_state_dict", &InferenceModel::load_state_dict, py::arg("values"), py::arg("strict"))
      .def("save_checkpoint", &InferenceModel::save_checkpoint, py::arg("path"))
      .def_property("trained_steps", &InferenceModel::trained_steps, &InferenceModel::set_trained_steps)
      .def_property_readonly("sample_shape", &InferenceModel::sample_shape)
      .def("layers", &InferenceModel::layers);

  m.def("train", &tessera::python::train_run, py::arg("config_json"), py::arg("x"), py::arg("y"), py::arg("x_val"),
        py::arg("y_val"), py::arg("stream"), py::arg("options"), py::arg("initial_state"), py::arg("on_step"),
        py::arg("on_epoch"));
}
