#pragma once
#include <string>
#include <vector>

#include "tessera/core/element_type.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/shape.hpp"

namespace tessera {

/// A tensor: a Shape over a flat, row-major Kokkos View in the default memory space, of
/// one ElementType. fp32 tensors hold floats (`view`, `data`); bf16 and fp16 tensors hold
/// their 16-bit patterns (`half_view`; half_float.hpp converts). Asking an fp32 accessor of
/// a 16-bit tensor throws, so code written for fp32 cannot misread reduced-precision data.
/// Copying a Tensor copies the handle (like a View), not the data. Host code never
/// dereferences the data; it goes through Kokkos kernels or `to_host`/`copy_from_host`.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates a zero-filled fp32 tensor.
  explicit Tensor(const Shape& shape, const std::string& label = "tessera::tensor");
  /// Allocates a zero-filled tensor of `type`.
  Tensor(const Shape& shape, ElementType type, const std::string& label = "tessera::tensor");
  /// Wraps existing storage of at least shape.numel() elements (e.g. a slice of the
  /// parameter store).
  Tensor(const Shape& shape, DeviceView<float> storage);
  /// Wraps existing 16-bit storage holding values of `type` (bf16 or fp16).
  Tensor(const Shape& shape, DeviceView<uint16_t> storage, ElementType type);

  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  ElementType type() const { return type_; }
  bool empty() const { return raw_data() == nullptr; }
  /// The float storage of an fp32 tensor; throws Error for a 16-bit one.
  float* data() const { return view().data(); }
  const DeviceView<float>& view() const {
    if (type_ != ElementType::fp32) throw_not(ElementType::fp32);
    return storage_;
  }
  /// The 16-bit storage of a bf16 or fp16 tensor; throws Error for an fp32 one.
  const DeviceView<uint16_t>& half_view() const {
    if (type_ == ElementType::fp32) throw_not(ElementType::bf16);
    return half_;
  }
  /// The first element's address, whatever the type (for libraries that take a type tag).
  void* raw_data() const {
    return type_ == ElementType::fp32 ? static_cast<void*>(storage_.data()) : static_cast<void*>(half_.data());
  }
  /// numel() times the element size.
  int64_t bytes() const { return numel() * static_cast<int64_t>(element_size(type_)); }

  /// The same storage under another shape of equal numel.
  Tensor reshaped(const Shape& shape) const;
  /// Elements [offset, offset + shape.numel()) of this tensor's storage as a tensor.
  Tensor slice(int64_t offset, const Shape& shape) const;

  /// The values as floats (16-bit values widened exactly).
  std::vector<float> to_host() const;
  /// Stores `values`, rounded to this tensor's type.
  void copy_from_host(const std::vector<float>& values) const;
  void fill(float value) const;
  void zero() const { fill(0.0f); }
  /// Allocates a new tensor of the same shape and type holding a copy of this one's data.
  Tensor clone(const std::string& label = "tessera::tensor") const;

 private:
  [[noreturn]] void throw_not(ElementType wanted) const;

  Shape shape_;
  ElementType type_ = ElementType::fp32;
  DeviceView<float> storage_;   // fp32
  DeviceView<uint16_t> half_;   // bf16, fp16
};

/// dst = src (shapes must have equal numel), converting when the types differ: rounding to
/// nearest even into a 16-bit type, exactly out of one.
void deep_copy(const Tensor& dst, const Tensor& src);

/// Makes `t` hold a tensor of `shape` and `type`, reallocating only when it has a different
/// numel or type, so steady-state steps allocate nothing.
void ensure_shape(Tensor& t, const Shape& shape, const std::string& label, ElementType type = ElementType::fp32);

}  // namespace tessera
