#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::io {

/// An array in the IDX format of the MNIST family of image sets: a big-endian header (two zero
/// bytes, the element type, the number of dimensions, then each dimension as a 32-bit
/// integer) followed by the values, row-major. Read whole from a gzip-compressed file (as the
/// data sets ship) or a plain one. Only unsigned bytes (type 0x08) are supported: the type of
/// every image and label file of MNIST and Fashion-MNIST.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> values;

  /// Throws IoError naming `path` when it is missing, not IDX, of another element type,
  /// shorter than its header says or longer (trailing bytes mean a damaged or misnamed file).
  static IdxArray read(const std::string& path);
  /// "[60000, 28, 28]"
  std::string dims_str() const;
};

}  // namespace tessera::io
