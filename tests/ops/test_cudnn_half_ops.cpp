// cuDNN's bf16 and fp16 convolutions and pooling (tensor-core math, fp32 sums) against its own
// fp32 ops on the same values, within the 16-bit type's rounding (support/half_op_checks.hpp),
// and the Kokkos CUDA kernels that serve the other 16-bit ops on the GPU (activations, inner
// products). Needs a GPU: built in CUDA builds with TESSERA_ENABLE_CUDNN.
#include "tessera/build_info.hpp"

#if TESSERA_ENABLE_CUDNN

#include <catch2/catch.hpp>

#include "support/conv_geometry.hpp"
#include "support/half_op_checks.hpp"
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/registry/backend_registry.hpp"
#include "tessera/registry/op_factory.hpp"

using namespace tessera;

namespace {

/// cuDNN writes a 16-bit layer's weight gradient in the layer's type (widened into the fp32
/// gradient afterwards, as autocast's cast of the weight does in backward): one rounding.
void compare_conv(const ops::ConvGeometry& g, ElementType type, uint32_t seed) {
  testing::check_half_conv(registry::backend("cudnn"), g, type, seed, unit_roundoff(type));
}

}  // namespace

TEST_CASE("cudnn bf16 and fp16 convolutions stay within the type's rounding of fp32, every pass",
          "[cudnn][conv][precision]") {
  const registry::OpFactory automatic("auto");
  ops::ConvGeometry g = testing::conv3d(1, 8, 8, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  g.type = ElementType::bf16;
  CHECK(automatic.conv(g, "conv")->backend() == "cudnn");
  for (const ElementType type : {ElementType::bf16, ElementType::fp16}) {
    // Few input channels (cosmoflow's first layer), a stride, a 1x1x1 kernel, 2D.
    compare_conv(testing::conv3d(2, 4, 16, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), type, 11);
    compare_conv(testing::conv3d(1, 32, 32, {6, 5, 7}, {3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}), type, 21);
    compare_conv(testing::conv3d(2, 16, 8, {4, 4, 4}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}), type, 31);
    ops::ConvGeometry g2 = testing::conv3d(2, 8, 16, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1});
    g2.spatial_rank = 2;
    compare_conv(g2, type, 41);
  }
}

TEST_CASE("cudnn bf16 and fp16 convolutions with timed algorithm choice stay within the type's rounding",
          "[cudnn][conv][precision]") {
  cudnn_backend::Options o = cudnn_backend::options();
  const cudnn_backend::Options saved = o;
  o.benchmark = true;
  o.deterministic = false;
  cudnn_backend::set_options(o);
  for (const ElementType type : {ElementType::bf16, ElementType::fp16})
    compare_conv(testing::conv3d(2, 4, 32, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), type, 51);
  cudnn_backend::set_options(saved);
}

TEST_CASE("the few-channel weight gradient kernel reads bf16 and fp16 and sums in fp32", "[cudnn][conv][precision]") {
  cudnn_backend::Options o = cudnn_backend::options();
  const cudnn_backend::Options saved = o;
  o.weight_gradient = cudnn_backend::Options::WeightGradient::few_channel_kernel;
  cudnn_backend::set_options(o);
  for (const ElementType type : {ElementType::bf16, ElementType::fp16}) {
    compare_conv(testing::conv3d(2, 4, 16, {8, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), type, 61);
    ops::ConvGeometry g2 = testing::conv3d(2, 3, 7, {1, 9, 9}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}, {1, 1, 1});
    g2.spatial_rank = 2;
    compare_conv(g2, type, 71);
  }
  cudnn_backend::set_options(saved);
}

TEST_CASE("cudnn bf16 and fp16 pooling match fp32: max exactly, average within one rounding",
          "[cudnn][pool][precision]") {
  for (const ElementType type : {ElementType::bf16, ElementType::fp16})
    testing::check_half_pool(registry::backend("cudnn"), type);
}

TEST_CASE("on the GPU, 16-bit activations and inner products run as Kokkos CUDA kernels within the type's rounding",
          "[cudnn][eltwise][inner_product][precision]") {
  const registry::OpFactory automatic("auto");
  ops::EltwiseDesc d{ops::EltwiseKind::leaky_relu, 0.01f, ElementType::bf16};
  CHECK(automatic.eltwise(d, "act")->backend() == "kokkos");
  for (const ElementType type : {ElementType::bf16, ElementType::fp16}) {
    testing::check_half_eltwise(registry::backend("kokkos"), type,
                                {ops::EltwiseKind::relu, ops::EltwiseKind::leaky_relu, ops::EltwiseKind::elu,
                                 ops::EltwiseKind::tanh, ops::EltwiseKind::gelu});
    testing::check_half_inner_product(registry::backend("kokkos"), type);
  }
}

#endif  // TESSERA_ENABLE_CUDNN
