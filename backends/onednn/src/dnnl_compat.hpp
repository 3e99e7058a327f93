#pragma once
// Where oneDNN 2.x (2.6 and later) and 3.x differ, behind one interface, so that every op of the
// backend is one source for both. Private to the oneDNN backend.
//
// What 3.0 changed that the backend meets:
// - operation descriptors (convolution_forward::desc and the like) are gone: primitive
//   descriptors are created directly, engine first, and backward ones take the forward hint;
// - eltwise and pooling take a destination (and pooling a dilation) descriptor;
// - memory::desc::dims() and data_type() became get_dims() and get_data_type();
// - the Xeon Phi ISAs (avx512_mic*) are gone and the AVX10/AMX-FP16 ones are new.
// Everything else the backend uses (memory, reorder, engine, stream, the C execute call,
// scratchpad attributes, impl_info_str) is the same in both.
#include <oneapi/dnnl/dnnl.hpp>

#include <string>

namespace tessera::onednn_backend::compat {

using dnnl::memory;

/// True when built against the 3.x API.
constexpr bool kApi3 = DNNL_VERSION_MAJOR >= 3;

/// A convolution's window in oneDNN's terms: spatial dims only, dilation counted as gaps.
struct ConvWindow {
  memory::dims strides, dilates, padding_l, padding_r;
};

/// A pooling window: spatial dims only, the same padding on both sides.
struct PoolWindow {
  memory::dims kernel, strides, padding;
};

// Primitive descriptors, created on the backend's engine with `attr`. An empty bias desc
// (memory::desc()) means no bias; backward ones take their forward pass's descriptor as hint.
// All use algorithm::convolution_direct and forward_training.

dnnl::convolution_forward::primitive_desc conv_forward_pd(const memory::desc& src, const memory::desc& weights,
                                                          const memory::desc& bias, const memory::desc& dst,
                                                          const ConvWindow& w, const dnnl::primitive_attr& attr);
dnnl::convolution_backward_data::primitive_desc conv_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst, const ConvWindow& w,
    const dnnl::convolution_forward::primitive_desc& hint, const dnnl::primitive_attr& attr);
dnnl::convolution_backward_weights::primitive_desc conv_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const ConvWindow& w, const dnnl::convolution_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr);

dnnl::inner_product_forward::primitive_desc inner_product_forward_pd(const memory::desc& src,
                                                                     const memory::desc& weights,
                                                                     const memory::desc& bias,
                                                                     const memory::desc& dst,
                                                                     const dnnl::primitive_attr& attr);
dnnl::inner_product_backward_data::primitive_desc inner_product_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst,
    const dnnl::inner_product_forward::primitive_desc& hint, const dnnl::primitive_attr& attr);
dnnl::inner_product_backward_weights::primitive_desc inner_product_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const dnnl::inner_product_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr);

/// Pointwise: source, destination and both gradients share `data`'s desc.
dnnl::eltwise_forward::primitive_desc eltwise_forward_pd(dnnl::algorithm alg, const memory::desc& data, float alpha,
                                                         float beta, const dnnl::primitive_attr& attr);
dnnl::eltwise_backward::primitive_desc eltwise_backward_pd(dnnl::algorithm alg, const memory::desc& data,
                                                           float alpha, float beta,
                                                           const dnnl::eltwise_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr);

dnnl::pooling_forward::primitive_desc pooling_forward_pd(dnnl::algorithm alg, const memory::desc& src,
                                                         const memory::desc& dst, const PoolWindow& w,
                                                         const dnnl::primitive_attr& attr);
dnnl::pooling_backward::primitive_desc pooling_backward_pd(dnnl::algorithm alg, const memory::desc& diff_src,
                                                           const memory::desc& diff_dst, const PoolWindow& w,
                                                           const dnnl::pooling_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr);

/// A memory desc's logical dims and data type.
memory::dims dims_of(const memory::desc& md);
memory::data_type data_type_of_desc(const memory::desc& md);

/// The name of the ISA oneDNN dispatches to ("avx512_core_bf16", ...; "all" when it does not say).
std::string isa_name(dnnl::cpu_isa isa);
/// True when `isa` includes AVX512-BF16 (every later ISA does: oneDNN's ISA values are nested
/// bit masks, in 2.x and 3.x alike).
bool isa_has_bf16(dnnl::cpu_isa isa);

}  // namespace tessera::onednn_backend::compat
