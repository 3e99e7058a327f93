#pragma once
#include <string>
#include <vector>

#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/shape.hpp"

namespace tessera {

/// A float32 tensor: a Shape over a flat, row-major Kokkos View in the default memory
/// space. Copying a Tensor copies the handle (like a View), not the data. Host code never
/// dereferences `data()`; it goes through Kokkos kernels or `to_host`/`copy_from_host`.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates a zero-filled tensor.
  explicit Tensor(const Shape& shape, const std::string& label = "tessera::tensor");
  /// Wraps existing storage of at least shape.numel() elements (e.g. a slice of the
  /// parameter store).
  Tensor(const Shape& shape, DeviceView<float> storage);

  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_.numel(); }
  bool empty() const { return storage_.data() == nullptr; }
  float* data() const { return storage_.data(); }
  const DeviceView<float>& view() const { return storage_; }

  /// The same storage under another shape of equal numel.
  Tensor reshaped(const Shape& shape) const;
  /// Elements [offset, offset + shape.numel()) of this tensor's storage as a tensor.
  Tensor slice(int64_t offset, const Shape& shape) const;

  std::vector<float> to_host() const;
  void copy_from_host(const std::vector<float>& values) const;
  void fill(float value) const;
  void zero() const { fill(0.0f); }
  /// Allocates a new tensor of the same shape holding a copy of this one's data.
  Tensor clone(const std::string& label = "tessera::tensor") const;

 private:
  Shape shape_;
  DeviceView<float> storage_;
};

/// dst = src (shapes must have equal numel).
void deep_copy(const Tensor& dst, const Tensor& src);

/// Makes `t` hold a tensor of `shape`, reallocating only when it has a different numel, so
/// steady-state steps allocate nothing.
void ensure_shape(Tensor& t, const Shape& shape, const std::string& label);

}  // namespace tessera
