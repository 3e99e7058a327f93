#include "errors.hpp"

#include "tessera/parallel/communicator.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

/// Raises tessera.errors.<name>(message) (with .path where given). The classes are Python's
/// own (python/tessera/errors.py), so that each can also derive from the built-in exception
/// it resembles (ValueError, OSError), which pybind11's exception types cannot.
void raise(const char* name, const std::string& message, const std::string* path = nullptr) {
  py::object type = py::module_::import("tessera.errors").attr(name);
  py::object error = type(message);
  if (path) error.attr("path") = *path;
  PyErr_SetObject(type.ptr(), error.ptr());
}

}  // namespace

void register_error_translation() {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ConfigError& e) {
      raise("ConfigError", e.what(), &e.path());
    } catch (const ShapeError& e) {
      raise("ShapeError", e.what());
    } catch (const IoError& e) {
      raise("IoError", e.what());
    } catch (const parallel::DistError& e) {
      raise("DistError", e.what());
    } catch (const ArrayError& e) {
      raise("ArrayError", e.what());
    } catch (const Error& e) {
      raise("Error", e.what());
    }
  });
}

}  // namespace tessera::python
