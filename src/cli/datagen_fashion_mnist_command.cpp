// `tessera datagen fashion-mnist`: imports the Fashion-MNIST image files into the HDF5 layout
// of docs/data.md, for the ResNet example (examples/resnet/).
#include <chrono>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/io/dataset.hpp"
#include "tessera/parallel/communicator.hpp"
#ifdef TESSERA_HAVE_HDF5
#include "tessera/io/fashion_mnist.hpp"
#endif

namespace tessera::cli {

CLI::App* add_fashion_mnist_command(CLI::App& datagen, FashionMnistArgs& a) {
  auto* cmd = datagen.add_subcommand(
      "fashion-mnist",
      "Import Fashion-MNIST (28x28 grey clothing images, 10 classes; Debian package dataset-fashion-mnist) from its "
      "IDX files: writes train.h5 (60000 images) and test.h5 (10000) with inputs [N, 1, 28, 28, 1] uint8 and "
      "class-index targets, and prints the \"data\" section of a run config that reads them.");
  cmd->add_option("--from", a.from,
                  "Folder holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz "
                  "and t10k-labels-idx1-ubyte.gz")
      ->capture_default_str();
  cmd->add_option("--output,-o", a.output,
                  "Folder to write train.h5 and test.h5 into (created if missing; files are replaced atomically)")
      ->required();
  cmd->add_option("--train-samples", a.train_samples, "Import only the first N training images (0: all 60000)")
      ->check(integer_in(0, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--test-samples", a.test_samples, "Import only the first N test images (0: all 10000)")
      ->check(integer_in(0, kMaxCount))
      ->capture_default_str();
  cmd->add_flag("--checksum", a.checksum,
                "Store each image as a chunk with HDF5's Fletcher-32 checksum, so damaged data is refused when read");
  return cmd;
}

int run_fashion_mnist(FashionMnistArgs& a) {
#ifndef TESSERA_HAVE_HDF5
  (void)a;
  throw io::hdf5_missing("datagen");
#else
  require_writable_folder(a.output, "--output (the data set)");
  // Nothing to save half-way: a stop ends the process at once and removes the file being written.
  const StopSignalHandlers signals(StopMode::at_once);
  const auto world = parallel::Communicator::world();
  // The files are small: one rank writes them, the others wait until they are in place.
  if (world.rank() == 0) {
    const auto start = std::chrono::steady_clock::now();
    const io::FashionMnistImport r =
        io::FashionMnistImport::run(a.from, a.output, a.checksum, a.train_samples, a.test_samples);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log::info(
        format("datagen fashion-mnist: wrote %lld training and %lld test images of %lld classes from %s in %.1f s\n"
               "read them with (mean and std measured on the training images):\n"
               "  \"data\": {\"source\": \"hdf5\", \"files\": \"%s/train.h5\", \"validation\": {\"files\": "
               "\"%s/test.h5\"},\n           \"normalize\": {\"mean\": %.4f, \"std\": %.4f}}",
               static_cast<long long>(r.train.samples), static_cast<long long>(r.test.samples),
               static_cast<long long>(r.train.classes), a.from.c_str(), seconds, a.output.c_str(), a.output.c_str(),
               r.mean, r.std));
  }
  world.barrier();
  return 0;
#endif
}

}  // namespace tessera::cli
