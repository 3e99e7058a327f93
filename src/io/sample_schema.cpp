#include "tessera/io/sample_schema.hpp"

#include "tessera/core/error.hpp"

namespace tessera::io {

int64_t element_size(ElementType type) {
  switch (type) {
    case ElementType::uint8: return 1;
    case ElementType::int16: return 2;
    case ElementType::int32: return 4;
    case ElementType::float32: return 4;
  }
  return 0;
}

std::string element_type_name(ElementType type) {
  switch (type) {
    case ElementType::uint8: return "uint8";
    case ElementType::int16: return "int16";
    case ElementType::int32: return "int32";
    case ElementType::float32: return "float32";
  }
  return "?";
}

int64_t SampleSchema::target_values(const parallel::Box& box) const {
  if (!targets_per_voxel) return target.numel();
  const int64_t per_voxel = target.rank() == 4 ? target[3] : 1;
  return box.volume() * per_voxel;
}

void SampleSchema::check_box(const parallel::Box& box, const std::string& who) const {
  for (int k = 0; k < 3; ++k) {
    const auto i = static_cast<size_t>(k);
    if (box.offset[i] < 0 || box.extent[i] < 1 || box.offset[i] + box.extent[i] > input[k])
      throw ShapeError(who + ": box " + box.str() + " does not lie inside a sample of shape " + input.str());
  }
}

std::string SampleSchema::str() const {
  std::string s = "inputs " + input.str() + " " + element_type_name(input_type) + ", targets " + target.str() + " " +
                  element_type_name(target_type) + (targets_per_voxel ? " per voxel" : " per sample");
  for (const Extra& e : extras) s += ", " + e.name + " " + e.shape.str() + " " + element_type_name(e.type);
  return s;
}

}  // namespace tessera::io
