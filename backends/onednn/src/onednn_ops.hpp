#pragma once
// The oneDNN ops' factories, each in its own file, and what they share. Private to the backend.
#include <memory>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/ops/eltwise.hpp"
#include "tessera/ops/inner_product.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::onednn_backend {

/// oneDNN 2.x computes some sizes and offsets in 32-bit ints: primitive creation divides by
/// zero once a spatial product D·H·W reaches 2^32 (a 2048³ convolution), and past 2^31 the
/// kernel choice already changes. Tensors beyond that go to another backend (or, for
/// pointwise ops, in pieces), as PyTorch does before handing tensors to cuDNN.
constexpr int64_t kMaxTensorElements = 2147483647;

/// Each returns nullptr, and says why in `why`, when oneDNN cannot run the case well.
std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g, std::string& why);
std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g, std::string& why);
/// Activations run over pieces of at most `max_piece` elements (exact: they are pointwise).
std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d, int64_t max_piece = kMaxTensorElements);
std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g, std::string& why);

/// oneDNN's name for `type`.
inline dnnl::memory::data_type data_type_of(ElementType type) {
  switch (type) {
    case ElementType::fp32: return dnnl::memory::data_type::f32;
    case ElementType::bf16: return dnnl::memory::data_type::bf16;
    case ElementType::fp16: return dnnl::memory::data_type::f16;
  }
  return dnnl::memory::data_type::undef;
}

/// The address of element `at` of `t`, whatever its type.
inline void* element_at(const Tensor& t, int64_t at) {
  return static_cast<char*>(t.raw_data()) + at * static_cast<int64_t>(element_size(t.type()));
}

/// Throws ShapeError unless `t` holds exactly `expected.numel()` elements (the ops read flat
/// memory, so e.g. a [N, H, W, C] tensor may carry an [N, 1, H, W, C] geometry), and Error
/// unless it is of `type`.
/// and is of `type`.
inline void require_elements(const Tensor& t, const Shape& expected, const std::string& op, const char* what,
                             ElementType type = ElementType::fp32) {
  if (t.empty() || t.numel() != expected.numel())
    throw ShapeError("onednn " + op + ": " + what + " has shape " + t.shape().str() + ", expected " + expected.str());
  if (t.type() != type)
    throw Error("onednn " + op + ": " + what + " is " + element_type_name(t.type()) + ", expected " +
                element_type_name(type));
}

}  // namespace tessera::onednn_backend
