#include "tessera/core/element_type.hpp"

namespace tessera {

size_t element_size(ElementType type) { return type == ElementType::fp32 ? 4 : 2; }

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::fp32: return "fp32";
    case ElementType::bf16: return "bf16";
    case ElementType::fp16: return "fp16";
  }
  return "?";
}

std::optional<ElementType> parse_element_type(const std::string& name) {
  for (ElementType t : {ElementType::fp32, ElementType::bf16, ElementType::fp16})
    if (name == element_type_name(t)) return t;
  return std::nullopt;
}

std::string element_type_names() { return "fp32, bf16, fp16"; }

double unit_roundoff(ElementType type) {
  switch (type) {
    case ElementType::fp32: return 0x1p-24;
    case ElementType::bf16: return 0x1p-8;
    case ElementType::fp16: return 0x1p-11;
  }
  return 1.0;
}

}  // namespace tessera
