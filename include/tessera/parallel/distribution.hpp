#pragma once
#include <string>

namespace tessera::parallel {

/// How a layer's activations are split over a process grid: the number of ranks along the
/// sample, channel, depth, height and width dimensions. A layer learns its place in the
/// grid only from this (and, with MPI, from the communicators of its ProcessGrid).
struct Distribution {
  int sample = 1, channel = 1, depth = 1, height = 1, width = 1;

  int ranks() const { return sample * channel * depth * height * width; }
  bool is_serial() const { return ranks() == 1; }
  bool is_spatial() const { return depth * height * width > 1; }
  std::string str() const;
  bool operator==(const Distribution& o) const {
    return sample == o.sample && channel == o.channel && depth == o.depth && height == o.height && width == o.width;
  }
};

}  // namespace tessera::parallel
