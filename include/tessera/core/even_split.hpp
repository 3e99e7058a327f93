#pragma once
#include <cstdint>

namespace tessera {

/// Where part `index` of `parts` near-equal parts of `total` items begins: total·index/parts
/// rounded to the nearest integer, halves up (index = parts gives total). The parts differ by
/// at most one item, none is empty when total ≥ parts, they are equal when parts divides
/// total, and the same rule splits samples (parallel::SampleShares with equal weights), so
/// 7 over 4 is 2/2/1/2 everywhere in Tessera.
constexpr int64_t even_boundary(int64_t total, int64_t parts, int64_t index) {
  // In 128 bits: sample shares call it with a sum of weights as `parts`.
  const auto t = static_cast<__int128>(total), p = static_cast<__int128>(parts);
  return static_cast<int64_t>((2 * t * index + p) / (2 * p));
}

/// The size of part `index` of `parts` near-equal parts of `total` (see even_boundary).
constexpr int64_t even_part(int64_t total, int64_t parts, int64_t index) {
  return even_boundary(total, parts, index + 1) - even_boundary(total, parts, index);
}

}  // namespace tessera
