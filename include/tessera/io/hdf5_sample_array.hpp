#pragma once
// One sample's whole array of any dataset of a data file (docs/data.md), by name: what tools
// read besides the inputs and targets training reads, e.g. the instance ids of
// `datagen cells`, which segmentation scores compare against.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"

namespace tessera::io {

/// A sample's array: its per-sample shape and its values (every stored type, int32 ids
/// included, is exact in double).
struct SampleArray {
  Shape shape;
  std::vector<double> values;
};

/// Sample `sample` of dataset `name` in the data file `path`. Whether the file stacks samples
/// is read from its "inputs" dataset (rank 5: [N, D, H, W, C]; rank 4: one sample), as the
/// reader does; without one, a single-sample file is assumed. Throws IoError naming the file
/// and the dataset when either cannot be read or the sample does not exist.
SampleArray read_sample_array(const std::string& path, const std::string& name, int64_t sample = 0);

}  // namespace tessera::io
