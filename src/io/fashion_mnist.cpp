#include "tessera/io/fashion_mnist.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tessera/core/error.hpp"
#include "tessera/io/hdf5_writer.hpp"
#include "tessera/io/idx_file.hpp"

namespace tessera::io {
namespace {

constexpr int64_t kSide = 28;
constexpr int64_t kClasses = 10;

/// Checks one set's images and labels against each other and writes them as `path`.
FashionMnistImport::Set write_set(const std::string& images_path, const std::string& labels_path,
                                  const std::string& path, bool checksum, const std::string& name, int64_t limit,
                                  double* sum = nullptr, double* squares = nullptr) {
  const IdxArray images = IdxArray::read(images_path);
  const IdxArray labels = IdxArray::read(labels_path);
  if (images.dims.size() != 3 || images.dims[1] != kSide || images.dims[2] != kSide)
    throw IoError(images_path + ": holds " + images.dims_str() + "; expected [N, 28, 28] images");
  if (labels.dims.size() != 1 || labels.dims[0] != images.dims[0])
    throw IoError(labels_path + ": holds " + labels.dims_str() + " labels but " + images_path + " holds " +
                  std::to_string(images.dims[0]) + " images; expected one label per image");
  FashionMnistImport::Set set;
  set.samples = limit > 0 ? std::min(limit, images.dims[0]) : images.dims[0];
  const size_t pixels = static_cast<size_t>(kSide * kSide);
  for (size_t i = 0; i < static_cast<size_t>(set.samples); ++i) {
    if (labels.values[i] >= kClasses)
      throw IoError(labels_path + ": label " + std::to_string(labels.values[i]) + " of " + name + " image " +
                    std::to_string(i) + " is not a class 0-9");
    set.classes = std::max<int64_t>(set.classes, labels.values[i] + 1);
  }
  if (sum)
    for (size_t i = 0; i < static_cast<size_t>(set.samples) * pixels; ++i) {
      *sum += images.values[i];
      *squares += static_cast<double>(images.values[i]) * images.values[i];
    }
  SampleSchema schema;
  schema.input = Shape{1, kSide, kSide, 1};
  schema.input_type = ElementType::uint8;
  schema.target = Shape{1};
  schema.target_type = ElementType::uint8;
  Hdf5SampleWriter::Options options;
  options.checksum = checksum;
  Hdf5SampleWriter writer(path, schema, set.samples, options);
  for (int64_t i = 0; i < set.samples; ++i)
    writer.write(i, images.values.data() + static_cast<size_t>(i) * pixels, labels.values.data() + i);
  writer.set_attribute("generator", "tessera datagen fashion-mnist from " + images_path + " and " + labels_path);
  writer.set_attribute("targets",
                       "class index: 0 T-shirt/top, 1 trouser, 2 pullover, 3 dress, 4 coat, 5 sandal, "
                       "6 shirt, 7 sneaker, 8 bag, 9 ankle boot");
  writer.commit();
  return set;
}

}  // namespace

FashionMnistImport FashionMnistImport::run(const std::string& from, const std::string& output, bool checksum,
                                           int64_t train_samples, int64_t test_samples) {
  std::error_code ec;
  std::filesystem::create_directories(output, ec);
  if (ec) throw IoError(output + ": cannot create the output folder: " + ec.message());
  FashionMnistImport r;
  double sum = 0.0, squares = 0.0;
  r.train = write_set(from + "/train-images-idx3-ubyte.gz", from + "/train-labels-idx1-ubyte.gz", output + "/train.h5",
                      checksum, "training", train_samples, &sum, &squares);
  r.test = write_set(from + "/t10k-images-idx3-ubyte.gz", from + "/t10k-labels-idx1-ubyte.gz", output + "/test.h5",
                     checksum, "test", test_samples);
  const auto n = static_cast<double>(r.train.samples * kSide * kSide);
  r.mean = sum / n;
  r.std = std::sqrt(std::max(squares / n - r.mean * r.mean, 0.0));
  return r;
}

}  // namespace tessera::io
