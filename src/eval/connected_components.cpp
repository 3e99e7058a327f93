#include "tessera/eval/connected_components.hpp"

#include <numeric>
#include <string>
#include <unordered_set>

#include "tessera/core/error.hpp"

namespace tessera::eval {
namespace {

/// Union-find over voxel indices, with path halving and union by smaller root index (so a
/// component's root is its first voxel, which fixes the ids' order).
class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
  size_t find(size_t i) {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a < b) parent_[b] = a;
    if (b < a) parent_[a] = b;
  }

 private:
  std::vector<size_t> parent_;
};

}  // namespace

Labels connected_components(const std::vector<uint8_t>& mask, const std::array<int64_t, 3>& size,
                            int64_t min_voxels) {
  const int64_t d = size[0], h = size[1], w = size[2];
  if (d < 1 || h < 1 || w < 1 || static_cast<int64_t>(mask.size()) != d * h * w)
    throw Error("connected components: a mask of " + std::to_string(mask.size()) + " voxels is not " +
                std::to_string(d) + "x" + std::to_string(h) + "x" + std::to_string(w));
  DisjointSets sets(mask.size());
  // Joining each voxel to its lower neighbours along every axis visits every face once.
  for (int64_t z = 0; z < d; ++z)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const auto i = static_cast<size_t>((z * h + y) * w + x);
        if (!mask[i]) continue;
        if (x > 0 && mask[i - 1]) sets.unite(i, i - 1);
        if (y > 0 && mask[i - static_cast<size_t>(w)]) sets.unite(i, i - static_cast<size_t>(w));
        if (z > 0 && mask[i - static_cast<size_t>(h * w)]) sets.unite(i, i - static_cast<size_t>(h * w));
      }
  std::vector<int64_t> voxels(mask.size(), 0);  // per root
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) ++voxels[sets.find(i)];
  Labels labels(mask.size(), 0);
  std::vector<uint32_t> id_of_root(mask.size(), 0);
  uint32_t next = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    const size_t root = sets.find(i);
    if (voxels[root] < min_voxels) continue;
    if (id_of_root[root] == 0) id_of_root[root] = ++next;  // roots come first in index order
    labels[i] = id_of_root[root];
  }
  return labels;
}

int64_t count_objects(const Labels& labels) {
  std::unordered_set<uint32_t> ids(labels.begin(), labels.end());
  ids.erase(0);
  return static_cast<int64_t>(ids.size());
}

}  // namespace tessera::eval
