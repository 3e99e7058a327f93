#include "tessera/ffn/seed_policy.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tessera::ffn {
namespace {

/// The 1-D squared distance transform of f (n values, stride apart in `data`), in place.
void transform_line(float* data, int64_t n, int64_t stride, std::vector<float>& f, std::vector<float>& z,
                    std::vector<int64_t>& v) {
  for (int64_t i = 0; i < n; ++i) f[static_cast<size_t>(i)] = data[i * stride];
  // Lower envelope of the parabolas (q − i)² + f(i): v holds their apexes, z the boundaries.
  int64_t k = 0;
  v[0] = 0;
  z[0] = -std::numeric_limits<float>::infinity();
  z[1] = std::numeric_limits<float>::infinity();
  auto meet = [&](int64_t q, int64_t p) {
    return ((f[static_cast<size_t>(q)] + static_cast<float>(q * q)) -
            (f[static_cast<size_t>(p)] + static_cast<float>(p * p))) /
           static_cast<float>(2 * (q - p));
  };
  for (int64_t q = 1; q < n; ++q) {
    float s = meet(q, v[static_cast<size_t>(k)]);
    while (k > 0 && s <= z[static_cast<size_t>(k)]) s = meet(q, v[static_cast<size_t>(--k)]);
    ++k;
    v[static_cast<size_t>(k)] = q;
    z[static_cast<size_t>(k)] = s;
    z[static_cast<size_t>(k + 1)] = std::numeric_limits<float>::infinity();
  }
  k = 0;
  for (int64_t q = 0; q < n; ++q) {
    while (z[static_cast<size_t>(k + 1)] < static_cast<float>(q)) ++k;
    const int64_t p = v[static_cast<size_t>(k)];
    data[q * stride] = static_cast<float>((q - p) * (q - p)) + f[static_cast<size_t>(p)];
  }
}

}  // namespace

std::vector<float> squared_distance_to(const std::vector<uint8_t>& boundary, const std::array<int64_t, 3>& size) {
  const float far = static_cast<float>(size[0] * size[0] + size[1] * size[1] + size[2] * size[2]) + 1.0f;
  std::vector<float> d(boundary.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = boundary[i] != 0 ? 0.0f : far;
  const int64_t longest = std::max({size[0], size[1], size[2]});
  std::vector<float> f(static_cast<size_t>(longest)), z(static_cast<size_t>(longest + 1));
  std::vector<int64_t> v(static_cast<size_t>(longest));
  const std::array<int64_t, 3> stride{size[1] * size[2], size[2], 1};
  for (size_t axis = 0; axis < 3; ++axis) {
    const size_t a = (axis + 1) % 3, b = (axis + 2) % 3;  // the other two axes
    for (int64_t i = 0; i < size[a]; ++i)
      for (int64_t j = 0; j < size[b]; ++j)
        transform_line(d.data() + i * stride[a] + j * stride[b], size[axis], stride[axis], f, z, v);
  }
  for (auto& x : d) x = std::min(x, far);
  return d;
}

std::vector<Voxel> grid_seeds(const std::array<int64_t, 3>& size, int64_t spacing) {
  std::vector<Voxel> seeds;
  for (int64_t d = spacing / 2; d < size[0]; d += spacing)
    for (int64_t h = spacing / 2; h < size[1]; h += spacing)
      for (int64_t w = spacing / 2; w < size[2]; w += spacing) seeds.push_back({d, h, w});
  return seeds;
}

std::vector<Voxel> interior_seeds(const LabeledVolume& volume, int64_t spacing, float dark) {
  std::vector<uint8_t> boundary(volume.image.size());
  for (size_t i = 0; i < boundary.size(); ++i) boundary[i] = volume.image[i] < dark ? 1 : 0;
  const std::vector<float> depth = squared_distance_to(boundary, volume.size);
  std::vector<Voxel> seeds;
  for (const Voxel& s : grid_seeds(volume.size, spacing))
    if (depth[static_cast<size_t>(volume.index(s))] > 0) seeds.push_back(s);
  std::stable_sort(seeds.begin(), seeds.end(), [&](const Voxel& a, const Voxel& b) {
    return depth[static_cast<size_t>(volume.index(a))] > depth[static_cast<size_t>(volume.index(b))];
  });
  return seeds;
}

}  // namespace tessera::ffn
