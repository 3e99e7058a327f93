#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/parallel/box.hpp"

namespace tessera::io {

/// The element types a data file may store (docs/data.md); everything becomes float32 in
/// memory.
enum class ElementType { uint8, int16, int32, float32 };

int64_t element_size(ElementType type);
/// "uint8", "int16", "int32", "float32".
std::string element_type_name(ElementType type);

/// What every sample of a dataset looks like, whatever file it comes from: its input shape
/// [D, H, W, C] and stored element type, and its targets, either T values per sample ([T]) or
/// values per voxel ([D, H, W] or [D, H, W, K], with the inputs' D, H, W).
struct SampleSchema {
  /// A further per-sample array a generator writes beside inputs and targets, for tools rather
  /// than training (which reads inputs and targets only): e.g. the instance ids of
  /// `datagen cells`, which segmentation scores compare against.
  struct Extra {
    std::string name;  // its dataset in the file
    Shape shape;       // per sample
    ElementType type = ElementType::int32;
  };

  Shape input;
  ElementType input_type = ElementType::float32;
  Shape target;
  ElementType target_type = ElementType::float32;
  bool targets_per_voxel = false;
  std::vector<Extra> extras;

  int64_t channels() const { return input[3]; }
  /// Values of the part `box` of one sample's inputs, and of its targets (per-voxel targets
  /// are cut by the box, per-sample targets are not).
  int64_t input_values(const parallel::Box& box) const { return box.volume() * channels(); }
  int64_t target_values(const parallel::Box& box) const;
  /// Bytes of the same, as stored.
  int64_t input_bytes(const parallel::Box& box) const { return input_values(box) * element_size(input_type); }
  int64_t target_bytes(const parallel::Box& box) const { return target_values(box) * element_size(target_type); }
  /// Throws ShapeError naming `who` unless `box` lies inside a sample.
  void check_box(const parallel::Box& box, const std::string& who) const;
  /// "inputs [64, 64, 64, 4] int16, targets [4] float32 per sample", then any extras
  std::string str() const;
};

}  // namespace tessera::io
