#pragma once
// How the Kokkos backend runs a 16-bit layer with its fp32 kernels: activations widened
// exactly into fp32 copies, master weights rounded to the layer's type and widened back (so
// the products are those of 16-bit operands), sums in fp32, each output rounded once. That is
// the arithmetic of a 16-bit kernel with fp32 accumulation (what oneDNN and cuDNN compute),
// in software on any CPU or GPU, at fp32's speed plus the copies.
#include <string>

#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// The fp32 copies one op of a 16-bit layer works in, allocated once per shape. For fp32
/// layers every call hands back the tensor it was given.
class Fp32Staging {
 public:
  explicit Fp32Staging(ElementType type) : type_(type) {}
  bool active() const { return type_ != ElementType::fp32; }

  /// The fp32 tensor an op writes in place of 16-bit `t` (unfilled); `t` itself for fp32.
  /// Copy it back with `deep_copy(t, staged)`, which rounds once.
  const Tensor& output(Tensor& slot, const Tensor& t) const {
    if (!active()) return t;
    ensure_shape(slot, t.shape(), "tessera::fp32_staging");
    return slot;
  }
  /// `t` as fp32: itself, or its values widened into `slot`.
  const Tensor& widened(Tensor& slot, const Tensor& t) const {
    if (!active()) return t;
    ensure_shape(slot, t.shape(), "tessera::fp32_staging");
    deep_copy(slot, t);
    return slot;
  }
  /// The fp32 weights `w` as the products see them: `w`, or rounded to the layer's type and
  /// widened back into `slot`.
  const Tensor& weights(Tensor& slot, const Tensor& w) {
    if (!active()) return w;
    ensure_shape(rounded_, w.shape(), "tessera::fp32_staging_rounded_weights", type_);
    deep_copy(rounded_, w);
    return widened(slot, rounded_);
  }
  /// `result`'s values into 16-bit `t`, rounded once; nothing for fp32 (they are one tensor).
  void store(const Tensor& t, const Tensor& result) const {
    if (active()) deep_copy(t, result);
  }

 private:
  ElementType type_;
  Tensor rounded_;
};

}  // namespace tessera::kokkos_backend
