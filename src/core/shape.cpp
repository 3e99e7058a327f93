#include "tessera/core/shape.hpp"

#include <limits>

#include "tessera/core/error.hpp"

namespace tessera {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(max_rank))
    throw ShapeError("shape of rank " + std::to_string(dims.size()) + " exceeds the maximum rank " +
                     std::to_string(max_rank));
  rank_ = static_cast<int>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) throw ShapeError("negative extent in shape");
    dims_[i] = dims[i];
  }
}

int64_t Shape::numel() const {
  // Extents come from configs and data files; a product past int64 must be an error, not a
  // wrapped (undefined) count that sizes an allocation or a loop.
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) {
    const int64_t d = dims_[static_cast<size_t>(i)];  // never negative (the constructors check)
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw ShapeError("shape " + str() + " holds more elements than a 64-bit count can hold");
    n *= d;
  }
  return n;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[static_cast<size_t>(i)]);
  }
  return s + "]";
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[static_cast<size_t>(i)] != other.dims_[static_cast<size_t>(i)]) return false;
  return true;
}

ActivationDims ActivationDims::of(const Shape& s) {
  ActivationDims a;
  switch (s.rank()) {
    case 2: a = {s[0], 1, 1, 1, s[1], 0}; break;
    case 4: a = {s[0], 1, s[1], s[2], s[3], 2}; break;
    case 5: a = {s[0], s[1], s[2], s[3], s[4], 3}; break;
    default:
      throw ShapeError("expected an activation of rank 2 ([N, C]), 4 ([N, H, W, C]) or 5 "
                       "([N, D, H, W, C]), got " + s.str());
  }
  return a;
}

Shape ActivationDims::to_shape() const {
  switch (spatial_rank) {
    case 0: return Shape{n, c};
    case 2: return Shape{n, h, w, c};
    default: return Shape{n, d, h, w, c};
  }
}

}  // namespace tessera
