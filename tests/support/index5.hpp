#pragma once
// Row-major 5D index arithmetic ([N, D, H, W, C]) for tests that write out block copies and
// halos element by element, independently of parallel::block_copy.
#include <cstddef>
#include <cstdint>

#include "tessera/parallel/block_copy.hpp"

namespace tessera::testing {

using parallel::Index5;

/// The row-major offset of `i` in an array of `extents`.
inline int64_t linear(const Index5& extents, const Index5& i) {
  int64_t l = 0;
  for (size_t k = 0; k < 5; ++k) l = l * extents[k] + i[k];
  return l;
}

/// Calls f(i) for every index below `extent`, in row-major order.
template <class F>
void for_each_index(const Index5& extent, F f) {
  Index5 i{};
  for (i[0] = 0; i[0] < extent[0]; ++i[0])
    for (i[1] = 0; i[1] < extent[1]; ++i[1])
      for (i[2] = 0; i[2] < extent[2]; ++i[2])
        for (i[3] = 0; i[3] < extent[3]; ++i[3])
          for (i[4] = 0; i[4] < extent[4]; ++i[4]) f(i);
}

inline Index5 plus(const Index5& a, const Index5& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]};
}

}  // namespace tessera::testing
