#pragma once
// How the Kokkos backend runs a 16-bit layer with its fp32 kernels: activations widened
// exactly into fp32 copies, master weights rounded to the layer's type and widened back (so
// the products are those of 16-bit operands), sums in fp32, each output rounded once. That is
// the arithmetic of a 16-bit kernel with fp32 accumulation (what oneDNN and cuDNN compute),
// in software on any CPU or GPU, at fp32's speed plus the copies.
#include <string>

#include "tessera/backends/kokkos/sweep.hpp"
#include "tessera/core/half_float.hpp"
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
  /// widened back into `slot`, in one sweep (through a 16-bit copy it took two passes of
  /// per-element kernels, most of a small bf16 dense layer's time).
  const Tensor& weights(Tensor& slot, const Tensor& w) const {
    if (!active()) return w;
    ensure_shape(slot, w.shape(), "tessera::fp32_staging");
    const float* in = w.view().data();
    float* out = slot.view().data();
    if (type_ == ElementType::bf16)
      for_each_index("tessera::fp32_staging_weights", w.numel(), KOKKOS_LAMBDA(const int64_t i) {
        out[i] = half_float::from_bf16(half_float::to_bf16(in[i]));
      });
    else
      for_each_index("tessera::fp32_staging_weights", w.numel(), KOKKOS_LAMBDA(const int64_t i) {
        out[i] = half_float::from_fp16(half_float::to_fp16(in[i]));
      });
    return slot;
  }
  /// `result`'s values into 16-bit `t`, rounded once; nothing for fp32 (they are one tensor).
  void store(const Tensor& t, const Tensor& result) const {
    if (active()) deep_copy(t, result);
  }

 private:
  ElementType type_;
};

}  // namespace tessera::kokkos_backend
