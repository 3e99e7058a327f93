#pragma once
// This rank's block of a global channels-last activation, cut on the host the way a
// ProcessGrid cuts it (samples, spatial box, channel range): the reference the MPI
// equivalence programs compare each rank's tensors with; and the values they fill it with.
#include <cstdint>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::testing {

/// A deterministic value in [-1, 1] of a global position: every rank computes its own block's
/// values, and the one-rank reference the whole, without communicating them.
inline float value_at(int64_t i, uint64_t salt) {
  const uint64_t h = (static_cast<uint64_t>(i) + salt) * 0x9e3779b97f4a7c15ull;
  return static_cast<float>((h >> 40) % 2001) / 1000.0f - 1.0f;
}

/// value_at(i, salt)·scale for every element of a global tensor of `shape`: the equivalence
/// programs' model input (salt 1) and output gradient (salt 2, scaled by 1/batch).
inline std::vector<float> global_values(const Shape& shape, uint64_t salt, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = value_at(static_cast<int64_t>(i), salt) * scale;
  return v;
}

/// [batch, the sample's dims...]: a model's global input shape.
inline Shape batched(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims{batch};
  for (const int64_t d : sample.dims()) dims.push_back(d);
  return Shape(dims);
}

inline std::vector<float> block_of(const std::vector<float>& global, const Shape& global_shape,
                                   const parallel::ProcessGrid& grid) {
  const ActivationDims g = ActivationDims::of(global_shape);
  const int64_t n0 = grid.first_sample(g.n, "test"), nl = grid.local_batch(g.n, "test");
  const int64_t c0 = grid.first_channel(g.c, "test"), cl = grid.local_channels(g.c, "test");
  parallel::Box box = parallel::Box::whole({g.d, g.h, g.w});
  if (global_shape.rank() > 2) box = grid.local_box({g.d, g.h, g.w}, "test");
  std::vector<float> out;
  for (int64_t n = n0; n < n0 + nl; ++n)
    for (int64_t d = box.offset[0]; d < box.offset[0] + box.extent[0]; ++d)
      for (int64_t h = box.offset[1]; h < box.offset[1] + box.extent[1]; ++h)
        for (int64_t w = box.offset[2]; w < box.offset[2] + box.extent[2]; ++w)
          for (int64_t c = c0; c < c0 + cl; ++c)
            out.push_back(global[static_cast<size_t>((((n * g.d + d) * g.h + h) * g.w + w) * g.c + c)]);
  return out;
}

}  // namespace tessera::testing
