#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/io/hdf5_layout.hpp"
#include "tessera/parallel/box.hpp"

namespace tessera::io {

/// Reads samples of an Hdf5Layout as stored bytes, each cut to a box: only that hyperslab is
/// read from the file ([index, box D, box H, box W, all channels]), in the file's element type
/// (conversion to float happens later, on the device: see normalization.hpp). Keeps the most
/// recently used files open. Files the layout did not check are checked against its schema
/// when they are opened. One reader serves one thread at a time; HDF5 calls of all readers are
/// serialised (the library is not thread-safe).
class Hdf5Reader {
 public:
  explicit Hdf5Reader(std::shared_ptr<const Hdf5Layout> layout, size_t max_open_files = 16);
  ~Hdf5Reader();
  Hdf5Reader(const Hdf5Reader&) = delete;
  Hdf5Reader& operator=(const Hdf5Reader&) = delete;

  /// Reads the part `box` of sample `index` of the layout: schema().input_bytes(box) bytes of
  /// inputs to `inputs` and schema().target_bytes(box) bytes of targets to `targets`.
  /// Throws IoError naming the file, the dataset and the problem.
  void read(int64_t index, const parallel::Box& box, void* inputs, void* targets);
  /// The same, for the inputs alone (any box: a slab of depth planes of a sample's box is one)
  /// or the targets alone.
  void read_inputs(int64_t index, const parallel::Box& box, void* inputs);
  void read_targets(int64_t index, const parallel::Box& box, void* targets);

  const Hdf5Layout& layout() const { return *layout_; }

 private:
  struct OpenFile;
  OpenFile& open(size_t file);

  std::shared_ptr<const Hdf5Layout> layout_;
  size_t max_open_;
  std::vector<std::unique_ptr<OpenFile>> open_;  // least recently used first
};

}  // namespace tessera::io
