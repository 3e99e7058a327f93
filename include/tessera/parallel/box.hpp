#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace tessera::parallel {

/// A rectangular region of one sample's spatial extent (depth, height, width): the part of
/// each sample a rank owns under a spatial split, or the whole sample when it is not split.
struct Box {
  std::array<int64_t, 3> offset{0, 0, 0};
  std::array<int64_t, 3> extent{1, 1, 1};

  /// The whole of a sample of spatial size `size`.
  static Box whole(const std::array<int64_t, 3>& size) { return Box{{0, 0, 0}, size}; }
  int64_t volume() const { return extent[0] * extent[1] * extent[2]; }
  bool operator==(const Box& o) const { return offset == o.offset && extent == o.extent; }
  /// "[0:16, 8:16, 0:16]"
  std::string str() const;
};

}  // namespace tessera::parallel
