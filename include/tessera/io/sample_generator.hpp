#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/io/sample_schema.hpp"

namespace tessera::io {

/// Host memory for one sample as a generator fills it, in the schema's shapes and stored types:
/// inputs, targets and one buffer per schema extra, in the schema's order.
struct SampleBuffers {
  void* inputs = nullptr;
  void* targets = nullptr;
  std::vector<void*> extras;
};

/// A source of synthetic samples that Hdf5DatasetWriter stores: each sample a pure function
/// of its index (training samples first, then validation ones), so any rank may make any
/// sample and the data set does not depend on the number of ranks.
class SampleGenerator {
 public:
  virtual ~SampleGenerator() = default;

  /// The shape and stored types of every sample.
  virtual SampleSchema schema() const = 0;
  /// Sample `index`: its inputs, targets and extras, into `out`. Throws to refuse the data set
  /// at that sample (nothing half-written stays).
  virtual void generate(int64_t index, const SampleBuffers& out) = 0;
  /// The string attributes every file carries (name, value): what generated it, what its
  /// targets mean.
  virtual std::vector<std::pair<std::string, std::string>> attributes() const = 0;
};

}  // namespace tessera::io
