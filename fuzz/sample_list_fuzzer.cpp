// Fuzz target: a sample list ("data.sample_list": one file name a line, relative to the list's
// folder; blank lines and '#' comments skipped). The list sits in a folder of small data files
// written at start-up — two that agree, one of another schema, one of two stacked samples, a
// text file, a sub-folder — whose names are in fuzz/dict/sample_list.dict. The layout is built
// checking the first file only and checking all, and every listed sample is then read, as
// training would. Bad lists must end in a tessera::Error naming the list, line or file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "fuzz_environment.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/hdf5_reader.hpp"
#include "tessera/io/hdf5_writer.hpp"

namespace {

using tessera::io::ElementType;
using tessera::io::Hdf5Layout;
using tessera::io::SampleSchema;

tessera::parallel::Box whole_sample(const SampleSchema& schema) {
  return tessera::parallel::Box::whole({schema.input[0], schema.input[1], schema.input[2]});
}

/// Reading stops after this many samples: a list may name one file any number of times.
constexpr int64_t kMaxSamplesRead = 8;

void write_data_file(const std::string& path, const SampleSchema& schema, int64_t samples) {
  tessera::io::Hdf5SampleWriter::Options options;
  options.stacked = samples > 1;
  options.durable = false;
  tessera::io::Hdf5SampleWriter writer(path, schema, samples, options);
  std::vector<unsigned char> inputs(static_cast<size_t>(schema.input_bytes(whole_sample(schema))), 3);
  std::vector<float> targets(static_cast<size_t>(schema.target.numel()), 0.5f);
  for (int64_t i = 0; i < samples; ++i) writer.write(i, inputs.data(), targets.data());
  writer.commit();
}

/// Writes the folder's data files once.
void write_data_files(const tessera::fuzz::FuzzEnvironment& environment) {
  SampleSchema small;
  small.input = tessera::Shape{2, 2, 2, 1};
  small.input_type = ElementType::uint8;
  small.target = tessera::Shape{2};
  SampleSchema other = small;
  other.input = tessera::Shape{2, 2, 2, 2};
  write_data_file(environment.path("a.h5"), small, 1);
  write_data_file(environment.path("b.h5"), small, 1);
  write_data_file(environment.path("c.h5"), other, 1);
  write_data_file(environment.path("stacked.h5"), small, 2);
  std::filesystem::create_directory(environment.path("sub"));
  write_data_file(environment.path("sub/d.h5"), small, 1);
  const std::string text = "not an HDF5 file\n";
  environment.write("notes.txt", reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

void read_list(const std::string& list, bool check_all) {
  auto layout = std::make_shared<const Hdf5Layout>(Hdf5Layout::from_sample_list(list, {}, check_all));
  const SampleSchema& schema = layout->schema();
  const auto box = whole_sample(schema);
  std::vector<unsigned char> inputs(static_cast<size_t>(schema.input_bytes(box)));
  std::vector<unsigned char> targets(static_cast<size_t>(schema.target_bytes(box)));
  tessera::io::Hdf5Reader reader(layout);
  for (int64_t i = 0; i < layout->size() && i < kMaxSamplesRead; ++i)
    reader.read(i, box, inputs.data(), targets.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& environment = tessera::fuzz::FuzzEnvironment::get();
  static const bool written = (write_data_files(environment), true);
  (void)written;
  const std::string list = environment.write("list.txt", data, size);
  for (const bool check_all : {false, true}) {
    try {
      read_list(list, check_all);
    } catch (const tessera::Error&) {
      // Rejected with a message naming the list, the line or the file: the expected outcome.
    }
  }
  return 0;
}
