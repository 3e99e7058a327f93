#pragma once
// Errors carry what went wrong, where (a layer, a JSON path, a file) and why. They are thrown
// anywhere and caught once, at the top of `tessera`, which prints them and exits non-zero.
#include <stdexcept>
#include <string>

namespace tessera {

/// Base of every error Tessera throws; `what()` is the full message shown to the user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A model/training configuration is invalid; the message starts with the JSON path.
class ConfigError : public Error {
 public:
  ConfigError(const std::string& json_path, const std::string& problem)
      : Error(json_path + ": " + problem), path_(json_path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Tensor shapes do not fit an operation (names the operation and both shapes).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// A file could not be read or written (names the file).
class IoError : public Error {
 public:
  using Error::Error;
};

/// Throws ShapeError(message) unless `condition` holds.
inline void require_shape(bool condition, const std::string& message) {
  if (!condition) throw ShapeError(message);
}

}  // namespace tessera
