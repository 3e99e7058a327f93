// The Fashion-MNIST importer against the files of Debian's dataset-fashion-mnist (installed by
// scripts/install_deps.sh --for-tests): record counts, labels, and known images read back through Tessera's
// HDF5 reader; and the IDX reader's errors on damaged files.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "support/hdf5_files.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/fashion_mnist.hpp"
#include "tessera/io/hdf5_dataset.hpp"
#include "tessera/io/hdf5_layout.hpp"
#include "tessera/io/idx_file.hpp"

namespace {

using tessera::Shape;
using tessera::Tensor;
namespace io = tessera::io;

const std::string kPackageFolder = "/usr/share/datasets/fashion-mnist";

/// Per image: its label, Σ pixels and Σ (i+1)·pixel_i over the 784 pixels in row-major order,
/// computed from the package's decompressed IDX bytes. The weighted sum tells a transposed or
/// shifted image from the right one.
struct KnownImage {
  int64_t index;
  int label;
  double sum, weighted;
};

io::Hdf5Dataset open(const std::string& path) {
  io::Hdf5Dataset::Options o;
  o.prefetch = false;
  o.store_bytes = 0;
  auto layout = std::make_shared<const io::Hdf5Layout>(io::Hdf5Layout::from_files({path}, {}, "$.data.files"));
  return io::Hdf5Dataset(layout, {}, o);
}

void check_known(io::Hdf5Dataset& data, const KnownImage& k) {
  Tensor x(Shape{1, 1, 28, 28, 1}), y(Shape{1, 1});
  data.load({k.index}, tessera::parallel::Box::whole({1, 28, 28}), x, y);
  const std::vector<float> pixels = x.to_host();
  double sum = 0.0, weighted = 0.0;
  for (size_t i = 0; i < pixels.size(); ++i) {
    sum += pixels[i];
    weighted += static_cast<double>(i + 1) * pixels[i];
  }
  INFO("image " << k.index);
  CHECK(y.to_host()[0] == static_cast<float>(k.label));
  CHECK(sum == k.sum);
  CHECK(weighted == k.weighted);
}

/// Images per label over a whole set, read in batches.
std::array<int64_t, 10> label_counts(io::Hdf5Dataset& data) {
  std::array<int64_t, 10> counts{};
  const int64_t batch = 1000;
  Tensor x(Shape{batch, 1, 28, 28, 1}), y(Shape{batch, 1});
  for (int64_t first = 0; first < data.size(); first += batch) {
    std::vector<int64_t> idx(static_cast<size_t>(batch));
    std::iota(idx.begin(), idx.end(), first);
    data.load(idx, tessera::parallel::Box::whole({1, 28, 28}), x, y);
    for (const float label : y.to_host()) {
      if (!(label >= 0.0f && label <= 9.0f && label == static_cast<float>(static_cast<int>(label))))
        FAIL("label " << label << " is not a class 0-9");
      ++counts[static_cast<size_t>(label)];
    }
  }
  return counts;
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("fashion-mnist import: counts, labels and known images of the package's files", "[io][hdf5]") {
  INFO("needs Debian's dataset-fashion-mnist (scripts/install_deps.sh --for-tests installs it)");
  REQUIRE(std::filesystem::exists(kPackageFolder + "/train-images-idx3-ubyte.gz"));
  tessera::testing::ScratchFolder out("tessera_fashion_mnist");
  const io::FashionMnistImport r = io::FashionMnistImport::run(kPackageFolder, out.path(), false);
  CHECK(r.train.samples == 60000);
  CHECK(r.test.samples == 10000);
  CHECK(r.train.classes == 10);
  CHECK(r.test.classes == 10);
  CHECK(r.mean == Approx(72.9404).epsilon(1e-5));
  CHECK(r.std == Approx(90.0212).epsilon(1e-5));

  io::Hdf5Dataset train = open(out / "train.h5");
  io::Hdf5Dataset test = open(out / "test.h5");
  REQUIRE(train.size() == 60000);
  REQUIRE(test.size() == 10000);
  CHECK(train.sample_shape() == Shape{1, 28, 28, 1});
  CHECK(train.target_shape() == Shape{1});
  check_known(train, {0, 9, 76247, 35954273});
  check_known(train, {59999, 5, 16684, 7678154});
  check_known(test, {0, 9, 33456, 16008570});
  check_known(test, {9999, 5, 24390, 10911940});
  // Fashion-MNIST is balanced: 6000 training and 1000 test images per class.
  for (const int64_t c : label_counts(train)) CHECK(c == 6000);
  for (const int64_t c : label_counts(test)) CHECK(c == 1000);
}

TEST_CASE("IDX reader: damaged files are errors naming the file and the problem", "[io][hdf5]") {
  tessera::testing::ScratchFolder dir("tessera_idx");
  // A plain (uncompressed) file reads like a gzipped one: [2, 2] bytes 1..4.
  const std::vector<unsigned char> good{0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4};
  write_bytes(dir / "good", good);
  const io::IdxArray a = io::IdxArray::read(dir / "good");
  CHECK(a.dims == std::vector<int64_t>{2, 2});
  CHECK(a.values == std::vector<uint8_t>{1, 2, 3, 4});

  auto damaged = [&](const std::string& name, std::vector<unsigned char> bytes) {
    write_bytes(dir / name, bytes);
    return dir / name;
  };
  const std::string truncated = damaged("truncated", {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3});
  CHECK_THROWS_WITH(io::IdxArray::read(truncated), Catch::Contains(truncated) && Catch::Contains("truncated") &&
                                                       Catch::Contains("promises 4 values, the file holds 3"));
  const std::string longer = damaged("longer", {0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3});
  CHECK_THROWS_WITH(io::IdxArray::read(longer), Catch::Contains(longer) && Catch::Contains("more values"));
  const std::string text = damaged("text", {'h', 'e', 'l', 'l', 'o'});
  CHECK_THROWS_WITH(io::IdxArray::read(text), Catch::Contains(text) && Catch::Contains("not an IDX file"));
  const std::string floats = damaged("floats", {0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  CHECK_THROWS_WITH(io::IdxArray::read(floats), Catch::Contains("0x0d is not supported"));
  CHECK_THROWS_AS(io::IdxArray::read(dir / "missing"), tessera::IoError);
  CHECK_THROWS_WITH(io::IdxArray::read(dir / "missing"), Catch::Contains("cannot open"));

  // An importer source whose labels do not match its images names both files.
  std::vector<unsigned char> images{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28};
  images.resize(images.size() + 2 * 784, 7);
  damaged("train-images-idx3-ubyte.gz", images);
  damaged("train-labels-idx1-ubyte.gz", {0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3});
  CHECK_THROWS_WITH(
      io::FashionMnistImport::run(dir.path(), dir / "out", false),
      Catch::Contains("train-labels-idx1-ubyte.gz: holds [3] labels") && Catch::Contains("holds 2 images"));
  damaged("train-labels-idx1-ubyte.gz", {0, 0, 8, 1, 0, 0, 0, 2, 1, 12});
  CHECK_THROWS_WITH(io::FashionMnistImport::run(dir.path(), dir / "out", false),
                    Catch::Contains("label 12 of training image 1 is not a class 0-9"));
  CHECK_FALSE(std::filesystem::exists(dir / "out/train.h5"));
}
