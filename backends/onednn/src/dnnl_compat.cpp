#include "dnnl_compat.hpp"

#include <utility>

#include "engine.hpp"

namespace tessera::onednn_backend::compat {
namespace {

const dnnl::engine& cpu() { return Engine::get().engine(); }

constexpr auto kTraining = dnnl::prop_kind::forward_training;
constexpr auto kDirect = dnnl::algorithm::convolution_direct;

}  // namespace

#if DNNL_VERSION_MAJOR >= 3

dnnl::convolution_forward::primitive_desc conv_forward_pd(const memory::desc& src, const memory::desc& weights,
                                                          const memory::desc& bias, const memory::desc& dst,
                                                          const ConvWindow& w, const dnnl::primitive_attr& attr) {
  return {cpu(), kTraining, kDirect, src, weights, bias, dst, w.strides, w.dilates, w.padding_l, w.padding_r, attr};
}

dnnl::convolution_backward_data::primitive_desc conv_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst, const ConvWindow& w,
    const dnnl::convolution_forward::primitive_desc& hint, const dnnl::primitive_attr& attr) {
  return {cpu(), kDirect, diff_src, weights, diff_dst, w.strides, w.dilates, w.padding_l, w.padding_r, hint, attr};
}

dnnl::convolution_backward_weights::primitive_desc conv_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const ConvWindow& w, const dnnl::convolution_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr) {
  return {cpu(),     kDirect,   src,         diff_weights, diff_bias, diff_dst,
          w.strides, w.dilates, w.padding_l, w.padding_r,  hint,      attr};
}

dnnl::inner_product_forward::primitive_desc inner_product_forward_pd(const memory::desc& src,
                                                                     const memory::desc& weights,
                                                                     const memory::desc& bias,
                                                                     const memory::desc& dst,
                                                                     const dnnl::primitive_attr& attr) {
  return {cpu(), kTraining, src, weights, bias, dst, attr};
}

dnnl::inner_product_backward_data::primitive_desc inner_product_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst,
    const dnnl::inner_product_forward::primitive_desc& hint, const dnnl::primitive_attr& attr) {
  return {cpu(), diff_src, weights, diff_dst, hint, attr};
}

dnnl::inner_product_backward_weights::primitive_desc inner_product_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const dnnl::inner_product_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr) {
  return {cpu(), src, diff_weights, diff_bias, diff_dst, hint, attr};
}

dnnl::eltwise_forward::primitive_desc eltwise_forward_pd(dnnl::algorithm alg, const memory::desc& data, float alpha,
                                                         float beta, const dnnl::primitive_attr& attr) {
  return {cpu(), kTraining, alg, data, data, alpha, beta, attr};
}

dnnl::eltwise_backward::primitive_desc eltwise_backward_pd(dnnl::algorithm alg, const memory::desc& data,
                                                           float alpha, float beta,
                                                           const dnnl::eltwise_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr) {
  return {cpu(), alg, data, data, data, alpha, beta, hint, attr};
}

dnnl::pooling_forward::primitive_desc pooling_forward_pd(dnnl::algorithm alg, const memory::desc& src,
                                                         const memory::desc& dst, const PoolWindow& w,
                                                         const dnnl::primitive_attr& attr) {
  const memory::dims no_dilation(w.kernel.size(), 0);
  return {cpu(), kTraining, alg, src, dst, w.strides, w.kernel, no_dilation, w.padding, w.padding, attr};
}

dnnl::pooling_backward::primitive_desc pooling_backward_pd(dnnl::algorithm alg, const memory::desc& diff_src,
                                                           const memory::desc& diff_dst, const PoolWindow& w,
                                                           const dnnl::pooling_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr) {
  const memory::dims no_dilation(w.kernel.size(), 0);
  return {cpu(), alg, diff_src, diff_dst, w.strides, w.kernel, no_dilation, w.padding, w.padding, hint, attr};
}

memory::dims dims_of(const memory::desc& md) { return md.get_dims(); }
memory::data_type data_type_of_desc(const memory::desc& md) { return md.get_data_type(); }

#else  // the 2.x API: an operation descriptor, then its primitive descriptor

dnnl::convolution_forward::primitive_desc conv_forward_pd(const memory::desc& src, const memory::desc& weights,
                                                          const memory::desc& bias, const memory::desc& dst,
                                                          const ConvWindow& w, const dnnl::primitive_attr& attr) {
  const dnnl::convolution_forward::desc d(kTraining, kDirect, src, weights, bias, dst, w.strides, w.dilates,
                                          w.padding_l, w.padding_r);
  return {d, attr, cpu()};
}

dnnl::convolution_backward_data::primitive_desc conv_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst, const ConvWindow& w,
    const dnnl::convolution_forward::primitive_desc& hint, const dnnl::primitive_attr& attr) {
  const dnnl::convolution_backward_data::desc d(kDirect, diff_src, weights, diff_dst, w.strides, w.dilates,
                                                w.padding_l, w.padding_r);
  return {d, attr, cpu(), hint};
}

dnnl::convolution_backward_weights::primitive_desc conv_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const ConvWindow& w, const dnnl::convolution_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr) {
  const dnnl::convolution_backward_weights::desc d(kDirect, src, diff_weights, diff_bias, diff_dst, w.strides,
                                                   w.dilates, w.padding_l, w.padding_r);
  return {d, attr, cpu(), hint};
}

dnnl::inner_product_forward::primitive_desc inner_product_forward_pd(const memory::desc& src,
                                                                     const memory::desc& weights,
                                                                     const memory::desc& bias,
                                                                     const memory::desc& dst,
                                                                     const dnnl::primitive_attr& attr) {
  const dnnl::inner_product_forward::desc d(kTraining, src, weights, bias, dst);
  return {d, attr, cpu()};
}

dnnl::inner_product_backward_data::primitive_desc inner_product_backward_data_pd(
    const memory::desc& diff_src, const memory::desc& weights, const memory::desc& diff_dst,
    const dnnl::inner_product_forward::primitive_desc& hint, const dnnl::primitive_attr& attr) {
  const dnnl::inner_product_backward_data::desc d(diff_src, weights, diff_dst);
  return {d, attr, cpu(), hint};
}

dnnl::inner_product_backward_weights::primitive_desc inner_product_backward_weights_pd(
    const memory::desc& src, const memory::desc& diff_weights, const memory::desc& diff_bias,
    const memory::desc& diff_dst, const dnnl::inner_product_forward::primitive_desc& hint,
    const dnnl::primitive_attr& attr) {
  const dnnl::inner_product_backward_weights::desc d(src, diff_weights, diff_bias, diff_dst);
  return {d, attr, cpu(), hint};
}

dnnl::eltwise_forward::primitive_desc eltwise_forward_pd(dnnl::algorithm alg, const memory::desc& data, float alpha,
                                                         float beta, const dnnl::primitive_attr& attr) {
  const dnnl::eltwise_forward::desc d(kTraining, alg, data, alpha, beta);
  return {d, attr, cpu()};
}

dnnl::eltwise_backward::primitive_desc eltwise_backward_pd(dnnl::algorithm alg, const memory::desc& data,
                                                           float alpha, float beta,
                                                           const dnnl::eltwise_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr) {
  const dnnl::eltwise_backward::desc d(alg, data, data, alpha, beta);
  return {d, attr, cpu(), hint};
}

dnnl::pooling_forward::primitive_desc pooling_forward_pd(dnnl::algorithm alg, const memory::desc& src,
                                                         const memory::desc& dst, const PoolWindow& w,
                                                         const dnnl::primitive_attr& attr) {
  const dnnl::pooling_forward::desc d(kTraining, alg, src, dst, w.strides, w.kernel, w.padding, w.padding);
  return {d, attr, cpu()};
}

dnnl::pooling_backward::primitive_desc pooling_backward_pd(dnnl::algorithm alg, const memory::desc& diff_src,
                                                           const memory::desc& diff_dst, const PoolWindow& w,
                                                           const dnnl::pooling_forward::primitive_desc& hint,
                                                           const dnnl::primitive_attr& attr) {
  const dnnl::pooling_backward::desc d(alg, diff_src, diff_dst, w.strides, w.kernel, w.padding, w.padding);
  return {d, attr, cpu(), hint};
}

memory::dims dims_of(const memory::desc& md) { return md.dims(); }
memory::data_type data_type_of_desc(const memory::desc& md) { return md.data_type(); }

#endif

std::string isa_name(dnnl::cpu_isa isa) {
  // Exact values, newest first; the enumerators that exist in the version built against.
  static const std::pair<dnnl::cpu_isa, const char*> names[] = {
#if DNNL_VERSION_MAJOR >= 3
      {dnnl::cpu_isa::avx10_1_512_amx_fp16, "avx10_1_512_amx_fp16"},
      {dnnl::cpu_isa::avx10_1_512_amx, "avx10_1_512_amx"},
      {dnnl::cpu_isa::avx10_1_512, "avx10_1_512"},
      {dnnl::cpu_isa::avx2_vnni_2, "avx2_vnni_2"},
#else
      {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx"},
      {dnnl::cpu_isa::avx512_mic_4ops, "avx512_mic_4ops"},
      {dnnl::cpu_isa::avx512_mic, "avx512_mic"},
#endif
      {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
      {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
      {dnnl::cpu_isa::avx512_core, "avx512_core"},
      {dnnl::cpu_isa::avx2_vnni, "avx2_vnni"},
      {dnnl::cpu_isa::avx2, "avx2"},
      {dnnl::cpu_isa::avx, "avx"},
      {dnnl::cpu_isa::sse41, "sse41"},
  };
  for (const auto& [value, name] : names)
    if (value == isa) return name;
  return "all";
}

bool isa_has_bf16(dnnl::cpu_isa isa) {
  const auto bits = static_cast<unsigned>(isa), bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (bits & bf16) == bf16;
}

}  // namespace tessera::onednn_backend::compat
