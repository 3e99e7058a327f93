// Fuzz target: an HDF5 data file, read the two ways a run config can name it. As a one-sample
// file of a sample list (CosmoFlow's layout) it is opened, checked against docs/data.md and
// loaded through Hdf5Dataset, which converts the stored values to float and refuses values
// that are not finite; as a file of many samples ("files") its first and last samples are read
// with Hdf5Reader. HDF5 itself is not instrumented: what the fuzzer tests is Tessera's use of
// it. Bad files must end in a tessera::Error naming the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz_environment.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/io/hdf5_dataset.hpp"
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/hdf5_reader.hpp"

namespace {

using tessera::io::Hdf5Layout;
using tessera::io::SampleSchema;
using tessera::parallel::Box;

/// A training run compares a data set's shapes with its model's before it allocates a batch,
/// and no model of a fuzzed file exists; samples read here are limited to a model-sized box
/// (the far corner of the sample, up to this many voxels a side) and to this many bytes.
constexpr int64_t kMaxSide = 6;
constexpr int64_t kMaxBytes = int64_t{1} << 22;

Box corner_box(const SampleSchema& schema) {
  Box box;
  for (size_t k = 0; k < 3; ++k) {
    box.extent[k] = std::min(schema.input[static_cast<int>(k)], kMaxSide);
    box.offset[k] = schema.input[static_cast<int>(k)] - box.extent[k];
  }
  return box;
}

bool small_enough(const SampleSchema& schema, const Box& box) {
  return schema.input_bytes(box) <= kMaxBytes && schema.target_bytes(box) <= kMaxBytes;
}

/// The file as the only entry of a sample list, loaded as a batch of one.
void read_as_listed_sample(const std::string& list) {
  auto layout = std::make_shared<const Hdf5Layout>(Hdf5Layout::from_sample_list(list, {}, true));
  const SampleSchema& schema = layout->schema();
  const Box box = corner_box(schema);
  if (!small_enough(schema, box)) return;
  tessera::io::Hdf5Dataset::Options options;
  options.prefetch = false;
  options.store_bytes = 0;
  tessera::io::Hdf5Dataset dataset(layout, {}, options);
  const tessera::Shape inputs_shape{1, box.extent[0], box.extent[1], box.extent[2], schema.channels()};
  const tessera::Shape targets_shape{1, schema.target_values(box)};
  tessera::Tensor inputs(inputs_shape), targets(targets_shape);
  dataset.load({0}, box, inputs, targets);
}

/// The file as a file of many samples: its first and last samples, as stored bytes.
void read_as_sample_file(const std::string& path) {
  auto layout = std::make_shared<const Hdf5Layout>(Hdf5Layout::from_files({path}, {}, "$.data.files"));
  const SampleSchema& schema = layout->schema();
  const Box box = corner_box(schema);
  if (!small_enough(schema, box)) return;
  std::vector<unsigned char> inputs(static_cast<size_t>(schema.input_bytes(box)));
  std::vector<unsigned char> targets(static_cast<size_t>(schema.target_bytes(box)));
  tessera::io::Hdf5Reader reader(layout);
  reader.read(0, box, inputs.data(), targets.data());
  if (layout->size() > 1) reader.read(layout->size() - 1, box, inputs.data(), targets.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& environment = tessera::fuzz::FuzzEnvironment::get();
  static const std::string list = [&] {
    const std::string text = "sample.h5\n";
    return environment.write("list.txt", reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }();
  const std::string path = environment.write("sample.h5", data, size);
  try {
    read_as_listed_sample(list);
  } catch (const tessera::Error&) {
    // Rejected with a message naming the file and the problem: the expected outcome.
  }
  try {
    read_as_sample_file(path);
  } catch (const tessera::Error&) {
  }
  return 0;
}
