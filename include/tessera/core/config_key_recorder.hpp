#pragma once
#include <string>
#include <vector>

#include "tessera/core/checked_number.hpp"

namespace tessera {

/// A numeric key as a ConfigObject read it: its `$.` path, its kind, and the bounds the reader
/// checked it against (`bounded` false: the code that reads it checks it, if at all).
struct NumericKeyRead {
  std::string path;
  bool integer = true;
  bool bounded = false;
  IntegerBounds integer_bounds;
  RealBounds real_bounds;
};

/// While one is alive, records every numeric key the ConfigObjects of its thread read: the
/// schema of a config as the code reads it, so that tests can feed every key bad values
/// without a list of keys to keep up to date.
class ConfigKeyRecorder {
 public:
  ConfigKeyRecorder();
  ~ConfigKeyRecorder();
  ConfigKeyRecorder(const ConfigKeyRecorder&) = delete;
  ConfigKeyRecorder& operator=(const ConfigKeyRecorder&) = delete;

  /// Each key once, in the order first read, with the bounds of its last read.
  const std::vector<NumericKeyRead>& reads() const { return reads_; }

  /// Called by ConfigObject; a no-op when no recorder is alive on this thread.
  static void note(const NumericKeyRead& read);

 private:
  std::vector<NumericKeyRead> reads_;
  ConfigKeyRecorder* previous_;
};

}  // namespace tessera
