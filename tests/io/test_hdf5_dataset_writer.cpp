#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "support/hdf5_files.hpp"
#include "tessera/eval/connected_components.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/cell_samples.hpp"
#include "tessera/io/cosmoflow_samples.hpp"
#include "tessera/io/hdf5_dataset_writer.hpp"
#include "tessera/io/hdf5_reader.hpp"

using namespace tessera;
using testing::ScratchFolder;

namespace {

/// Samples of [2, 2, 2, 1] int16 inputs and one float32 target, each a closed form of its
/// index (so a read-back names the sample it came from), refusing sample `fail_at` the way a
/// generator refuses a data set: by throwing.
class IndexedSamples final : public io::SampleGenerator {
 public:
  explicit IndexedSamples(int64_t fail_at = -1) : fail_at_(fail_at) {}
  io::SampleSchema schema() const override {
    io::SampleSchema schema;
    schema.input = Shape{2, 2, 2, 1};
    schema.input_type = io::ElementType::int16;
    schema.target = Shape{1};
    return schema;
  }
  void generate(int64_t index, const io::SampleBuffers& out) override {
    if (index == fail_at_) throw std::runtime_error("sample " + std::to_string(index) + " refused");
    for (int16_t v = 0; v < 8; ++v) static_cast<int16_t*>(out.inputs)[v] = static_cast<int16_t>(100 * index + v);
    *static_cast<float*>(out.targets) = static_cast<float>(index);
  }
  std::vector<std::pair<std::string, std::string>> attributes() const override { return {{"generator", "test"}}; }

 private:
  int64_t fail_at_;
};

io::DatasetLayout layout(const std::string& output, int64_t train, int64_t validation, int64_t per_file = 0) {
  io::DatasetLayout l;
  l.output = output;
  l.train_samples = train;
  l.validation_samples = validation;
  l.sample_per_file = per_file == 0;
  if (per_file > 0) l.samples_per_file = per_file;
  return l;
}

/// The index each sample of `files` came from, read back through the reader of training runs.
std::vector<int64_t> indices_read(const io::Hdf5Layout& files) {
  io::Hdf5Reader reader(std::make_shared<const io::Hdf5Layout>(files));
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < files.size(); ++i) {
    std::vector<int16_t> inputs(8);
    float target = -1;
    reader.read(i, parallel::Box::whole({2, 2, 2}), inputs.data(), &target);
    for (int16_t v = 0; v < 8; ++v) CHECK(inputs[static_cast<size_t>(v)] == 100 * static_cast<int16_t>(target) + v);
    indices.push_back(static_cast<int64_t>(target));
  }
  return indices;
}

/// Every file under `folder`, relative to it.
std::set<std::string> files_in(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    if (entry.is_regular_file()) names.insert(std::filesystem::relative(entry.path(), folder).string());
  return names;
}

}  // namespace

TEST_CASE("A data set's files are planned per set and shared round-robin by the ranks", "[io]") {
  const io::DatasetFiles one_each(layout("/data", 3, 2));
  REQUIRE(one_each.all().size() == 5);
  CHECK(one_each.all()[0].path == "/data/train/sample_000000.h5");
  CHECK(one_each.all()[3].listed_as == "validation/sample_000000.h5");
  CHECK(one_each.all()[3].first_index == 3);

  const io::DatasetFiles stacked(layout("/data", 5, 3, 2));
  REQUIRE(stacked.all().size() == 5);  // 2 + 2 + 1 training samples, 2 + 1 validation ones
  CHECK(stacked.all()[2].listed_as == "train_0002.h5");
  CHECK(stacked.all()[2].samples == 1);
  CHECK(stacked.all()[4].listed_as == "validation_0001.h5");
  CHECK(stacked.all()[4].first_index == 7);

  for (const int ranks : {1, 2, 3, 7}) {
    std::multiset<int64_t> written;
    for (int rank = 0; rank < ranks; ++rank)
      for (const io::PlannedFile* file : stacked.of_rank(rank, ranks))
        for (int64_t k = 0; k < file->samples; ++k) written.insert(file->first_index + k);
    CHECK(written == std::multiset<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});  // each sample once
  }
  CHECK(stacked.of_rank(1, 3).size() == 2);  // files 1 and 4
  CHECK(stacked.of_rank(1, 3)[1] == &stacked.all()[4]);
}

TEST_CASE("The data section names the lists or the file patterns written", "[io]") {
  CHECK(io::DatasetFiles(layout("/d", 3, 2)).data_section() ==
        "\"data\": {\"source\": \"hdf5\", \"sample_list\": \"/d/train.txt\", \"validation\": {\"sample_list\": "
        "\"/d/validation.txt\"}");
  CHECK(io::DatasetFiles(layout("/d", 3, 0, 2)).data_section() ==
        "\"data\": {\"source\": \"hdf5\", \"files\": \"/d/train_*.h5\"");
}

TEST_CASE("One file per sample, listed in train.txt and validation.txt, reads back in order", "[io][hdf5]") {
  ScratchFolder dir("tessera_dataset_writer");
  IndexedSamples samples;
  io::Hdf5DatasetWriter writer(layout(dir / "out", 3, 2), false, parallel::Communicator::self());
  CHECK(writer.samples_here() == 5);
  writer.write(samples, false);
  CHECK(files_in(dir / "out") == std::set<std::string>{"train.txt", "validation.txt", "train/sample_000000.h5",
                                                       "train/sample_000001.h5", "train/sample_000002.h5",
                                                       "validation/sample_000000.h5", "validation/sample_000001.h5"});
  CHECK(indices_read(io::Hdf5Layout::from_sample_list(dir / "out/train.txt", {}, true)) ==
        std::vector<int64_t>{0, 1, 2});
  CHECK(indices_read(io::Hdf5Layout::from_sample_list(dir / "out/validation.txt", {}, true)) ==
        std::vector<int64_t>{3, 4});
}

TEST_CASE("Files of several samples hold them in order, with no lists", "[io][hdf5]") {
  ScratchFolder dir("tessera_dataset_writer");
  IndexedSamples samples;
  io::Hdf5DatasetWriter writer(layout(dir / "out", 5, 0, 2), true, parallel::Communicator::self());
  writer.write(samples, false);
  CHECK(files_in(dir / "out") == std::set<std::string>{"train_0000.h5", "train_0001.h5", "train_0002.h5"});
  CHECK(indices_read(io::Hdf5Layout::from_files({dir / "out/train_*.h5"}, {}, "test")) ==
        std::vector<int64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("A refused sample leaves the files before it whole, its own file absent and no list", "[io][hdf5]") {
  ScratchFolder dir("tessera_dataset_writer");
  SECTION("one file per sample") {
    IndexedSamples samples(/*fail_at=*/2);
    io::Hdf5DatasetWriter writer(layout(dir / "out", 4, 1), false, parallel::Communicator::self());
    CHECK_THROWS_WITH(writer.write(samples, false), "sample 2 refused");
    CHECK(files_in(dir / "out") == std::set<std::string>{"train/sample_000000.h5", "train/sample_000001.h5"});
  }
  SECTION("files of several samples") {
    IndexedSamples samples(/*fail_at=*/3);
    io::Hdf5DatasetWriter writer(layout(dir / "out", 6, 0, 2), false, parallel::Communicator::self());
    CHECK_THROWS_WITH(writer.write(samples, false), "sample 3 refused");
    CHECK(files_in(dir / "out") == std::set<std::string>{"train_0000.h5"});  // train_0001.h5 was half-made
    CHECK(indices_read(io::Hdf5Layout::from_files({dir / "out/train_0000.h5"}, {}, "test")) ==
          std::vector<int64_t>{0, 1});
  }
}

TEST_CASE("CosmoFlow samples that carry no signal are refused before their file is in place", "[io][hdf5]") {
  ScratchFolder dir("tessera_dataset_writer");
  io::CosmoFlowSamples samples({{8, 2, 0}, io::ElementType::int16, 1e-9});  // every count 0
  io::Hdf5DatasetWriter writer(layout(dir / "out", 2, 0), false, parallel::Communicator::self());
  CHECK_THROWS_AS(writer.write(samples, false), ConfigError);
  CHECK(files_in(dir / "out").empty());
}

TEST_CASE("Cell samples report the membrane fractions and image moments of the volumes written", "[io][hdf5]") {
  ScratchFolder dir("tessera_dataset_writer");
  io::CellSamples samples({16, 8.0, 1.6, 0.08, 3}, /*train_samples=*/2);
  io::Hdf5DatasetWriter writer(layout(dir / "out", 2, 1), false, parallel::Communicator::self());
  writer.write(samples, false);
  const auto stats = samples.statistics(parallel::Communicator::self());
  // The same figures from the files, read back.
  double membrane[2] = {0, 0}, voxels[2] = {0, 0}, sum = 0, squares = 0;
  for (const char* list : {"train.txt", "validation.txt"}) {
    const size_t set = std::string(list) == "train.txt" ? 0 : 1;
    const auto files =
        std::make_shared<const io::Hdf5Layout>(io::Hdf5Layout::from_sample_list(dir / "out/" + list, {}, true));
    io::Hdf5Reader reader(files);
    for (int64_t i = 0; i < files->size(); ++i) {
      std::vector<uint8_t> image(16 * 16 * 16), labels(image.size());
      reader.read(i, parallel::Box::whole({16, 16, 16}), image.data(), labels.data());
      for (size_t v = 0; v < image.size(); ++v) {
        membrane[set] += labels[v] == io::CellVolumes::kMembrane ? 1 : 0;
        sum += image[v];
        squares += static_cast<double>(image[v]) * image[v];
      }
      voxels[set] += static_cast<double>(image.size());
    }
  }
  CHECK(stats.train_membrane == Approx(membrane[0] / voxels[0]));
  CHECK(stats.validation_membrane == Approx(membrane[1] / voxels[1]));
  CHECK(stats.train_membrane > 0.05);
  CHECK(stats.train_membrane < 0.95);
  const double n = voxels[0] + voxels[1], mean = sum / n;
  CHECK(stats.mean == Approx(mean));
  CHECK(stats.std == Approx(std::sqrt(squares / n - mean * mean)));
}

TEST_CASE("Cell sample files carry each voxel's cell id, 0 exactly on membrane, one connected object per id",
          "[io][hdf5][cells]") {
  ScratchFolder dir("tessera_dataset_writer");
  io::CellSamples samples({24, 8.0, 1.6, 0.08, 4}, /*train_samples=*/1);
  CHECK(samples.schema().str() ==
        "inputs [24, 24, 24, 1] uint8, targets [24, 24, 24] uint8 per voxel, instances [24, 24, 24] int32");
  io::Hdf5DatasetWriter writer(layout(dir / "out", 1, 0), false, parallel::Communicator::self());
  writer.write(samples, false);
  const std::string path = dir / "out/train/sample_000000.h5";
  const int64_t volume = 24 * 24 * 24;

  // Read with the plain HDF5 C API: the dataset as any tool would see it.
  std::vector<int32_t> ids(static_cast<size_t>(volume));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t dataset = H5Dopen2(file, "instances", H5P_DEFAULT);
  REQUIRE(dataset >= 0);
  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[3] = {0, 0, 0};
  REQUIRE(H5Sget_simple_extent_ndims(space) == 3);  // one sample per file: [D, H, W], as its inputs
  H5Sget_simple_extent_dims(space, dims, nullptr);
  CHECK((dims[0] == 24 && dims[1] == 24 && dims[2] == 24));
  CHECK(H5Dread(dataset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data()) >= 0);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);

  // The same as the generator's own labels: membrane where the id is 0, interior elsewhere.
  std::vector<uint8_t> image(static_cast<size_t>(volume)), labels(image.size());
  io::Hdf5Reader reader(
      std::make_shared<const io::Hdf5Layout>(io::Hdf5Layout::from_sample_list(dir / "out/train.txt", {}, true)));
  reader.read(0, parallel::Box::whole({24, 24, 24}), image.data(), labels.data());
  std::set<int32_t> distinct;
  for (size_t v = 0; v < ids.size(); ++v) {
    REQUIRE((ids[v] == 0) == (labels[v] == io::CellVolumes::kMembrane));
    if (ids[v] != 0) distinct.insert(ids[v]);
  }
  // 3³ seeds on a grid of pitch 8: most cells reach the volume.
  CHECK(distinct.size() >= 20);
  CHECK(distinct.size() <= 27);
  // Each cell is convex: its voxels are one 6-connected piece.
  for (const int32_t id : distinct) {
    std::vector<uint8_t> mine(ids.size());
    for (size_t v = 0; v < ids.size(); ++v) mine[v] = ids[v] == id ? 1 : 0;
    INFO("cell " << id);
    CHECK(eval::count_objects(eval::connected_components(mine, {24, 24, 24})) == 1);
  }
}
