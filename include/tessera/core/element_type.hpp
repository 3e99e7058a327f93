#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tessera {

/// The element type of a tensor and the precision a layer computes in. fp32 is IEEE single;
/// bf16 keeps fp32's 8-bit exponent with 7 mantissa bits (same range, ~3 decimal digits);
/// fp16 is IEEE half (5-bit exponent: range ±65504, so gradients need loss scaling).
enum class ElementType : uint8_t { fp32, bf16, fp16 };

/// Bytes per element: 4 or 2.
size_t element_size(ElementType type);
/// "fp32", "bf16", "fp16": the names configs and flags use.
const char* element_type_name(ElementType type);
/// The type named `name`, or none.
std::optional<ElementType> parse_element_type(const std::string& name);
/// "fp32, bf16, fp16", for error messages.
std::string element_type_names();
/// The unit roundoff of `type` (half the distance from 1 to the next value): 2^-24, 2^-8,
/// 2^-11. What tests derive their tolerances from.
double unit_roundoff(ElementType type);

}  // namespace tessera
