#include "tessera/core/tensor.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/half_float.hpp"

namespace tessera {
namespace {

using Range = std::pair<int64_t, int64_t>;
using HostFloats = Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

int64_t extent_of(const Tensor& t) {
  return static_cast<int64_t>(t.type() == ElementType::fp32 ? t.view().extent(0) : t.half_view().extent(0));
}

}  // namespace

Tensor::Tensor(const Shape& shape, const std::string& label)
    : shape_(shape), storage_(label, static_cast<size_t>(shape.numel())) {}

Tensor::Tensor(const Shape& shape, ElementType type, const std::string& label) : shape_(shape), type_(type) {
  if (type == ElementType::fp32)
    storage_ = DeviceView<float>(label, static_cast<size_t>(shape.numel()));
  else
    half_ = DeviceView<uint16_t>(label, static_cast<size_t>(shape.numel()));
}

Tensor::Tensor(const Shape& shape, DeviceView<float> storage) : shape_(shape), storage_(std::move(storage)) {
  require_shape(static_cast<int64_t>(storage_.extent(0)) >= shape.numel(),
                "storage of " + std::to_string(storage_.extent(0)) + " elements is too small for shape " +
                    shape.str());
}

Tensor::Tensor(const Shape& shape, DeviceView<uint16_t> storage, ElementType type)
    : shape_(shape), type_(type), half_(std::move(storage)) {
  if (type == ElementType::fp32) throw Error("a tensor of 16-bit storage must be bf16 or fp16, not fp32");
  require_shape(static_cast<int64_t>(half_.extent(0)) >= shape.numel(),
                "storage of " + std::to_string(half_.extent(0)) + " elements is too small for shape " + shape.str());
}

void Tensor::throw_not(ElementType wanted) const {
  throw Error(std::string("a ") + element_type_name(type_) + " tensor of shape " + shape_.str() + " was read as " +
              (wanted == ElementType::fp32 ? "fp32" : "16-bit") + " data (a code path without " +
              element_type_name(type_) + " support)");
}

Tensor Tensor::reshaped(const Shape& shape) const {
  require_shape(shape.numel() == numel(), "cannot reshape " + shape_.str() + " to " + shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::slice(int64_t offset, const Shape& shape) const {
  const int64_t extent = extent_of(*this);
  require_shape(offset >= 0 && offset + shape.numel() <= extent,
                "slice of " + shape.str() + " at offset " + std::to_string(offset) + " is outside a tensor of " +
                    std::to_string(extent) + " elements");
  const Range range(offset, offset + shape.numel());
  if (type_ == ElementType::fp32) return Tensor(shape, DeviceView<float>(Kokkos::subview(storage_, range)));
  return Tensor(shape, DeviceView<uint16_t>(Kokkos::subview(half_, range)), type_);
}

std::vector<float> Tensor::to_host() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  const Range range(0, numel());
  if (type_ == ElementType::fp32) {
    Kokkos::deep_copy(HostFloats(out.data(), out.size()), Kokkos::subview(storage_, range));
    return out;
  }
  auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), Kokkos::subview(half_, range));
  for (size_t i = 0; i < out.size(); ++i) out[i] = half_float::from_half(host(i), type_);
  return out;
}

void Tensor::copy_from_host(const std::vector<float>& values) const {
  require_shape(static_cast<int64_t>(values.size()) == numel(),
                "copy_from_host: " + std::to_string(values.size()) + " values for a tensor of shape " + shape_.str());
  const Range range(0, numel());
  if (type_ == ElementType::fp32) {
    Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(values.data(),
                                                                                               values.size());
    Kokkos::deep_copy(Kokkos::subview(storage_, range), host);
    return;
  }
  Kokkos::View<uint16_t*, HostSpace> host("tessera::tensor_host", values.size());
  for (size_t i = 0; i < values.size(); ++i) host(i) = half_float::to_half(values[i], type_);
  Kokkos::deep_copy(Kokkos::subview(half_, range), host);
}

void Tensor::fill(float value) const {
  const Range range(0, numel());
  if (type_ == ElementType::fp32)
    Kokkos::deep_copy(Kokkos::subview(storage_, range), value);
  else
    Kokkos::deep_copy(Kokkos::subview(half_, range), half_float::to_half(value, type_));
}

Tensor Tensor::clone(const std::string& label) const {
  Tensor t(shape_, type_, label);
  deep_copy(t, *this);
  return t;
}

namespace {

/// `f` rounded to the 16-bit type H, and H's bits widened: half_float's functions with the type
/// a template argument, so that a conversion kernel's loop has no per-element branch on it.
template <ElementType H>
KOKKOS_INLINE_FUNCTION uint16_t to_16(float f) {
  if constexpr (H == ElementType::bf16)
    return half_float::to_bf16(f);
  else
    return half_float::to_fp16(f);
}
template <ElementType H>
KOKKOS_INLINE_FUNCTION float from_16(uint16_t h) {
  if constexpr (H == ElementType::bf16)
    return half_float::from_bf16(h);
  else
    return half_float::from_fp16(h);
}

/// dst = src converted From → To (distinct types): fp32 rounded once, 16-bit widened exactly,
/// bf16 ↔ fp16 through fp32. With the types run-time arguments every element took to_half's
/// fp16 branches too and no loop vectorised (a 4x2048->128 bf16 dense layer's weight copies
/// took 0.5 ms).
template <ElementType From, ElementType To>
void convert(const Tensor& dst, const Tensor& src) {
  const RangePolicy all(0, src.numel());
  if constexpr (From == ElementType::fp32) {
    const auto s = src.view();
    const auto d = dst.half_view();
    Kokkos::parallel_for("tessera::round_to_half", all, KOKKOS_LAMBDA(int64_t i) { d(i) = to_16<To>(s(i)); });
  } else if constexpr (To == ElementType::fp32) {
    const auto s = src.half_view();
    const auto d = dst.view();
    Kokkos::parallel_for("tessera::widen_half", all, KOKKOS_LAMBDA(int64_t i) { d(i) = from_16<From>(s(i)); });
  } else {
    const auto s = src.half_view();
    const auto d = dst.half_view();
    Kokkos::parallel_for("tessera::convert_half", all,
                         KOKKOS_LAMBDA(int64_t i) { d(i) = to_16<To>(from_16<From>(s(i))); });
  }
}

}  // namespace

void deep_copy(const Tensor& dst, const Tensor& src) {
  require_shape(dst.numel() == src.numel(),
                "deep_copy between tensors of " + dst.shape().str() + " and " + src.shape().str());
  const Range range(0, src.numel());
  const ElementType from = src.type(), to = dst.type();
  if (from == to) {
    if (from == ElementType::fp32)
      Kokkos::deep_copy(Kokkos::subview(dst.view(), range), Kokkos::subview(src.view(), range));
    else
      Kokkos::deep_copy(Kokkos::subview(dst.half_view(), range), Kokkos::subview(src.half_view(), range));
    return;
  }
  using E = ElementType;
  // One kernel per pair of types, each 16-bit type known at compile time.
  if (from == E::fp32)
    (to == E::bf16 ? convert<E::fp32, E::bf16> : convert<E::fp32, E::fp16>)(dst, src);
  else if (to == E::fp32)
    (from == E::bf16 ? convert<E::bf16, E::fp32> : convert<E::fp16, E::fp32>)(dst, src);
  else
    (from == E::bf16 ? convert<E::bf16, E::fp16> : convert<E::fp16, E::bf16>)(dst, src);
}

void ensure_shape(Tensor& t, const Shape& shape, const std::string& label, ElementType type) {
  if (!t.empty() && t.numel() == shape.numel() && t.type() == type) {
    if (t.shape() != shape) t = t.reshaped(shape);
    return;
  }
  t = Tensor(shape, type, label);
}

}  // namespace tessera
