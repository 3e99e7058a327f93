#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessera {

/// The extents of a dense row-major tensor, outermost first (rank 0..6).
/// Activations are channels-last: [N, C] for features, [N, H, W, C] in 2D and
/// [N, D, H, W, C] in 3D.
class Shape {
 public:
  static constexpr int max_rank = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  /// Product of all extents (1 for rank 0).
  int64_t numel() const;
  std::vector<int64_t> dims() const { return {dims_.begin(), dims_.begin() + rank_}; }
  /// "[4, 16, 16, 16, 8]"
  std::string str() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

 private:
  std::array<int64_t, max_rank> dims_{};
  int rank_ = 0;
};

/// Views an activation shape ([N, C], [N, H, W, C] or [N, D, H, W, C]) as N, D, H, W, C
/// so 2D and 3D operations share one 3D implementation (2D has D = 1).
struct ActivationDims {
  int64_t n = 1, d = 1, h = 1, w = 1, c = 1;
  int spatial_rank = 0;  // 0 (features), 2 or 3

  static ActivationDims of(const Shape& shape);
  int64_t spatial() const { return d * h * w; }
  /// The activation shape of the given rank with these extents.
  Shape to_shape() const;
};

}  // namespace tessera
