#pragma once
// The first images of Debian's Fashion-MNIST (dataset-fashion-mnist, which
// scripts/install_deps.sh --for-tests installs) imported as the examples' READMEs say, into a scratch
// folder removed at scope exit: what the example tests train on.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "support/scratch_folder.hpp"
#include "tessera/io/fashion_mnist.hpp"

namespace tessera::testing {

class FashionMnistSubset {
 public:
  /// Imports the first `train` training and `test` test images; throws naming the package
  /// when it is not installed.
  FashionMnistSubset(const std::string& name, int64_t train, int64_t test) : folder_(name) {
    const std::string package = "/usr/share/datasets/fashion-mnist";
    if (!std::filesystem::exists(package + "/train-images-idx3-ubyte.gz"))
      throw std::runtime_error("needs Debian's dataset-fashion-mnist in " + package +
                               " (scripts/install_deps.sh --for-tests installs it)");
    imported_ = io::FashionMnistImport::run(package, folder_.path(), false, train, test);
  }
  FashionMnistSubset(const FashionMnistSubset&) = delete;
  FashionMnistSubset& operator=(const FashionMnistSubset&) = delete;

  std::string train_file() const { return folder_ / "train.h5"; }
  std::string test_file() const { return folder_ / "test.h5"; }
  const io::FashionMnistImport& imported() const { return imported_; }

 private:
  ScratchFolder folder_;
  io::FashionMnistImport imported_;
};

}  // namespace tessera::testing
