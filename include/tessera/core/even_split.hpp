#pragma once
#include <cstdint>

namespace tessera {

/// Where part `index` of `parts` near-equal parts of `total` items begins: total·index/parts
/// rounded to the nearest integer, halves up (index = parts gives total). The parts differ by
/// at most one item, none is empty when total ≥ parts, they are equal when parts divides
/// total, and the same rule splits samples (parallel::SampleShares with equal weights), so
/// 7 over 4 is 2/2/1/2 everywhere in Tessera.
constexpr int64_t even_boundary(int64_t total, int64_t parts, int64_t index) {
  return (2 * total * index + parts) / (2 * parts);
}

/// The size of part `index` of `parts` near-equal parts of `total` (see even_boundary).
constexpr int64_t even_part(int64_t total, int64_t parts, int64_t index) {
  return even_boundary(total, parts, index + 1) - even_boundary(total, parts, index);
}

}  // namespace tessera
