#pragma once
// cuDNN's convolution kernels load 16-byte vectors, and fault with a misaligned address on an
// operand that starts off a 16-byte boundary: a slab of a larger tensor, as the
// halo-overlapped convolution and the fused convolution + max pool pass. Such an operand goes
// through a copy of its own, allocated once, at the first call that needs it; aligned
// operands (every whole tensor: Kokkos allocates on 128-byte boundaries) are used in place.
#include <cstdint>
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::cudnn_backend {

/// One operand position of an op (its input, its output, ...) and its aligned copy.
class AlignedOperand {
 public:
  static constexpr std::uintptr_t alignment = 16;

  AlignedOperand(Shape shape, std::string label, ElementType type = ElementType::fp32)
      : shape_(std::move(shape)), label_(std::move(label)), type_(type) {}

  static bool aligned(const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.raw_data()) % alignment == 0; }

  /// What cuDNN reads for `t`: `t` itself, or a copy of it when `t` is misaligned.
  const Tensor& read(const Tensor& t) {
    if (aligned(t)) return t;
    deep_copy(copy(), t);
    return copy_;
  }
  /// What cuDNN writes for `t` (all of it: every pass overwrites its output); `written(t)`
  /// then copies it into `t` when it was not `t` itself.
  const Tensor& write(const Tensor& t) { return aligned(t) ? t : copy(); }
  void written(const Tensor& t) const {
    if (!aligned(t)) deep_copy(t, copy_);
  }

 private:
  const Tensor& copy() {
    if (copy_.empty()) copy_ = Tensor(shape_, type_, label_);
    return copy_;
  }

  Shape shape_;
  std::string label_;
  ElementType type_;
  Tensor copy_;
};

}  // namespace tessera::cudnn_backend
