#pragma once
#include <cstdint>
#include <string>

namespace tessera::io {

/// Converts Fashion-MNIST (Zalando's 28x28 grey clothing images in 10 classes, as IDX files:
/// train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
/// t10k-labels-idx1-ubyte.gz; Debian's dataset-fashion-mnist installs them in
/// /usr/share/datasets/fashion-mnist) into the HDF5 layout of docs/data.md: `train.h5` and
/// `test.h5` in the output folder, inputs [N, 1, 28, 28, 1] uint8 (depth 1, as 2D models
/// read them), targets [N] uint8 class indices 0-9 for softmax cross-entropy. Each file is
/// written atomically. The MNIST files of the same layout convert alike.
struct FashionMnistImport {
  struct Set {
    int64_t samples = 0;
    int64_t classes = 0;  // 1 + the largest label
  };
  Set train, test;
  /// Mean and standard deviation of the training pixels (0-255), for the normalisation.
  double mean = 0.0, std = 0.0;

  /// Imports the first `train_samples` training and `test_samples` test images (0: all of
  /// them; fewer make a quick subset for trials and tests). Throws IoError naming the file when
  /// one is missing or damaged, or when images and labels disagree (counts, a label above 9,
  /// images not 28x28).
  static FashionMnistImport run(const std::string& from, const std::string& output, bool checksum,
                                int64_t train_samples = 0, int64_t test_samples = 0);
};

}  // namespace tessera::io
