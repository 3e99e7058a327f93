#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace tessera::parallel {

/// How each spatial extent of a model's activations is cut when P ranks split it and P need
/// not divide it. An extent N along an axis has an alignment a (1 unless set): it is cut into
/// U = ⌊N/a⌋ units of a planes, the units are shared as evenly as the samples are
/// (even_boundary: parts that differ by at most one unit), and the last part also takes the
/// N − a·U planes left over. Rank i's planes are therefore
///   [a·even_boundary(U, P, i), a·even_boundary(U, P, i + 1)), the last one ending at N.
///
/// Why alignments: a window with stride s maps rank i's input block onto its output block
/// only when the input block starts at s times where the output block starts. A model gives
/// its input extent a larger alignment than the extent its strided layers produce
/// (model::align_spatial_splits), so that every split activation of a chain is cut at the same
/// units and each rank's blocks line up through every layer. With alignment 1, blocks differ by
/// at most one plane. Keyed by the extent, not the activation: an extent met twice in one model
/// (a U-Net's skip and its up-sampled path) is cut alike both times.
///
/// Every ProcessGrid of a model holds the same SpatialAlignment, so every rank computes every
/// rank's box from the extent alone, without a message.
class SpatialAlignment {
 public:
  /// The alignment of `extent` along `axis` (0 depth, 1 height, 2 width); 1 when not set.
  int64_t of(size_t axis, int64_t extent) const;
  void set(size_t axis, int64_t extent, int64_t alignment);
  /// Every alignment set, per axis: extent → alignment.
  const std::array<std::map<int64_t, int64_t>, 3>& all() const { return alignments_; }

  /// Where part `index` of `parts` begins along `axis` for an extent of `extent` (index = parts
  /// gives the extent). Parts are empty where there are fewer units than parts (see fits).
  int64_t boundary(size_t axis, int64_t extent, int parts, int index) const;
  /// Whether `parts` ranks each get at least one unit of `extent`.
  bool fits(size_t axis, int64_t extent, int parts) const;
  /// "depth 14 over 3 ranks in blocks of 4 planes (aligned for the strided layers after it)":
  /// why an extent does not split, for errors.
  std::string explain(size_t axis, int64_t extent, int parts) const;

 private:
  std::array<std::map<int64_t, int64_t>, 3> alignments_;
};

}  // namespace tessera::parallel
