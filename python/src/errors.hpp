#pragma once
#include <string>

#include <pybind11/pybind11.h>

#include "tessera/core/error.hpp"

namespace tessera::python {

/// A numpy argument of the wrong type, dtype, shape or memory order; the message names the
/// argument. Raised in Python as tessera.ArrayError (a ValueError).
class ArrayError : public Error {
 public:
  ArrayError(const std::string& argument, const std::string& problem) : Error(argument + ": " + problem) {}
};

/// Makes every Tessera exception reach Python as the matching class of tessera.errors
/// (Error, ConfigError with its .path, ShapeError, IoError, DistError, ArrayError) with the
/// same message.
void register_error_translation();

}  // namespace tessera::python
