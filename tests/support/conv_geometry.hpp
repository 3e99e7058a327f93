#pragma once
// Convolution and pooling geometries written out per axis for the op and kernel tests.
#include <array>
#include <cstdint>

#include "tessera/ops/conv.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::testing {

/// A validated 3D geometry: batch n, ci -> co channels, input extent, kernel, stride,
/// padding and dilation per axis D, H, W.
inline ops::ConvGeometry conv3d(int64_t n, int64_t ci, int64_t co, std::array<int64_t, 3> in, std::array<int64_t, 3> k,
                                std::array<int64_t, 3> s, std::array<int64_t, 3> p, std::array<int64_t, 3> d) {
  ops::ConvGeometry g;
  g.batch = n;
  g.in_channels = ci;
  g.out_channels = co;
  g.in_size = in;
  g.kernel = k;
  g.stride = s;
  g.padding = p;
  g.dilation = d;
  g.validate("test");
  return g;
}

/// A validated pooling geometry: `kind`, spatial rank, batch n, c channels, input extent,
/// window, stride and padding per axis D, H, W.
inline ops::PoolGeometry pool_geometry(ops::PoolKind kind, int rank, int64_t n, int64_t c, std::array<int64_t, 3> in,
                                       std::array<int64_t, 3> k, std::array<int64_t, 3> s, std::array<int64_t, 3> p) {
  ops::PoolGeometry g;
  g.kind = kind;
  g.spatial_rank = rank;
  g.batch = n;
  g.channels = c;
  g.in_size = in;
  g.kernel = k;
  g.stride = s;
  g.padding = p;
  g.validate("test");
  return g;
}

}  // namespace tessera::testing
