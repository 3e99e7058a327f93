#pragma once
// One backend's 16-bit op against its fp32 op on the same values, within the 16-bit type's
// rounding (precision_bounds.hpp), for each op kind. Shared by the CPU tests of the Kokkos
// kernels and the GPU tests of cuDNN and of the Kokkos CUDA kernels.
#include <string>
#include <vector>

#include "support/precision_bounds.hpp"
#include "tessera/ops/backend.hpp"

namespace tessera::testing {

/// Forward, backward data and backward weights of `g` in `type` against fp32, on `backend`.
/// The weights are fp32 values the type does not hold (their rounding inside the op is
/// tested); the weight gradient is compared within `weight_gradient_rel` relative (0 where the
/// op writes it from fp32 sums, u where it is computed in the 16-bit type) plus the fp32 sums'
/// error.
inline void check_half_conv(ops::Backend& backend, const ops::ConvGeometry& g32, ElementType type, uint32_t seed,
                            double weight_gradient_rel) {
  INFO(element_type_name(type) << " " << g32.str() << " on " << backend.name());
  const double u = unit_roundoff(type);
  ops::ConvGeometry g16 = g32;
  g16.type = type;
  std::string why;
  auto op32 = backend.make_conv(g32), op16 = backend.make_conv(g16, &why);
  REQUIRE(op32);
  INFO(why);
  REQUIRE(op16);
  const Tensor x16 = half_values(g32.input_shape(), seed, type, type), x = as_fp32(x16);
  const Tensor dy16 = half_values(g32.output_shape(), seed + 1, type, type), dy = as_fp32(dy16);
  const Tensor w = half_values(g32.weight_shape(), seed + 2, type, ElementType::fp32);
  std::vector<float> wv = w.to_host();
  for (size_t i = 0; i < wv.size(); ++i) wv[i] *= 1.0f + 0x1p-13f * static_cast<float>(i % 7 + 1);
  w.copy_from_host(wv);
  const Tensor bias = half_values(Shape{g32.out_channels}, seed + 3, type, ElementType::fp32);

  Tensor y(g32.output_shape()), y16(g32.output_shape(), type), y_abs(g32.output_shape());
  op32->forward(x, w, bias, y);
  op16->forward(x16, w, bias, y16);
  op32->forward(absolute(x), absolute(w), absolute(bias), y_abs);
  check_within("forward", y16, y, y_abs, u, 1.01 * u, underflow_error(type));

  Tensor dx(g32.input_shape()), dx16(g32.input_shape(), type), dx_abs(g32.input_shape());
  op32->backward_data(dy, w, dx);
  op16->backward_data(dy16, w, dx16);
  op32->backward_data(absolute(dy), absolute(w), dx_abs);
  check_within("backward data", dx16, dx, dx_abs, u, 1.01 * u, underflow_error(type));

  Tensor dw(g32.weight_shape()), dw16(g32.weight_shape()), dw_abs(g32.weight_shape());
  Tensor db(Shape{g32.out_channels}), db16(Shape{g32.out_channels}), db_abs(Shape{g32.out_channels});
  op32->backward_weights(x, dy, dw, db);
  op16->backward_weights(x16, dy16, dw16, db16);
  op32->backward_weights(absolute(x), absolute(dy), dw_abs, db_abs);
  const double sums = static_cast<double>(g32.batch) * g32.out_size()[0] * g32.out_size()[1] * g32.out_size()[2];
  check_within("weight gradient", dw16, dw, dw_abs, weight_gradient_rel, 4 * sums * 0x1p-24, underflow_error(type));
  check_within("bias gradient (fp32)", db16, db, db_abs, 0.0, 4 * sums * 0x1p-24);
}

/// Max and average pooling in `type` against fp32: a max picks one input and routes the
/// gradient to it (exact), an average rounds once.
inline void check_half_pool(ops::Backend& backend, ElementType type) {
  for (const ops::PoolKind kind : {ops::PoolKind::max, ops::PoolKind::average}) {
    ops::PoolGeometry g;
    g.kind = kind;
    g.batch = 2;
    g.channels = 16;
    g.in_size = {8, 6, 8};
    g.kernel = g.stride = {2, 2, 2};
    INFO(element_type_name(type) << " " << g.str() << " on " << backend.name());
    ops::PoolGeometry g16 = g;
    g16.type = type;
    auto op32 = backend.make_pool(g), op16 = backend.make_pool(g16);
    REQUIRE(op16);
    const Tensor x16 = half_values(g.input_shape(), 5, type, type), x = as_fp32(x16);
    const Tensor dy16 = half_values(g.output_shape(), 6, type, type), dy = as_fp32(dy16);
    Tensor y(g.output_shape()), y16(g.output_shape(), type);
    Tensor dx(g.input_shape()), dx16(g.input_shape(), type);
    op32->forward(x, y);
    op16->forward(x16, y16);
    op32->backward(x, dy, dx);
    op16->backward(x16, dy16, dx16);
    const double rel = kind == ops::PoolKind::max ? 0.0 : unit_roundoff(type);
    check_within("pool forward", y16, y, y, rel, 1e-6, underflow_error(type));
    check_within("pool backward", dx16, dx, dx, rel, 1e-6, underflow_error(type));
  }
}

/// The activations `kinds` in `type` against fp32: f and f'·dy computed in fp32 and rounded
/// once.
inline void check_half_eltwise(ops::Backend& backend, ElementType type, const std::vector<ops::EltwiseKind>& kinds) {
  const double u = unit_roundoff(type);
  for (const ops::EltwiseKind kind : kinds) {
    ops::EltwiseDesc d{kind, kind == ops::EltwiseKind::leaky_relu ? 0.01f : 1.0f};
    ops::EltwiseDesc d16 = d;
    d16.type = type;
    INFO(element_type_name(type) << " " << d.str() << " on " << backend.name());
    auto op32 = backend.make_eltwise(d), op16 = backend.make_eltwise(d16);
    REQUIRE(op16);
    const Shape s{3, 7, 5, 4};
    const Tensor x16 = half_values(s, 7, type, type), x = as_fp32(x16);
    const Tensor dy16 = half_values(s, 8, type, type), dy = as_fp32(dy16);
    Tensor y(s), y16(s, type), dx(s), dx16(s, type);
    op32->forward(x, y);
    op16->forward(x16, y16);
    op32->backward(x, dy, dx);
    op16->backward(x16, dy16, dx16);
    check_within("forward", y16, y, y, u, 1e-6, underflow_error(type));
    check_within("backward", dx16, dx, dx, u, 1e-6, underflow_error(type));
  }
}

/// An inner product in `type` against fp32: the bound of check_half_conv, fp32 gradients of
/// the weights and bias from exact 16-bit inputs.
inline void check_half_inner_product(ops::Backend& backend, ElementType type) {
  const double u = unit_roundoff(type);
  const ops::InnerProductGeometry g32{6, 40, 9, ElementType::fp32};
  ops::InnerProductGeometry g16 = g32;
  g16.type = type;
  INFO(element_type_name(type) << " inner product on " << backend.name());
  auto op32 = backend.make_inner_product(g32), op16 = backend.make_inner_product(g16);
  REQUIRE(op16);
  const Shape xs{g32.batch, g32.in_features}, ys{g32.batch, g32.out_features}, ws{g32.out_features, g32.in_features};
  const Tensor x16 = half_values(xs, 21, type, type), x = as_fp32(x16);
  const Tensor dy16 = half_values(ys, 22, type, type), dy = as_fp32(dy16);
  const Tensor w = half_values(ws, 23, type, ElementType::fp32);
  std::vector<float> wv = w.to_host();
  for (size_t i = 0; i < wv.size(); ++i) wv[i] *= 1.0f + 0x1p-13f * static_cast<float>(i % 7 + 1);
  w.copy_from_host(wv);
  const Tensor bias = half_values(Shape{g32.out_features}, 24, type, ElementType::fp32);
  Tensor y(ys), y16(ys, type), y_abs(ys);
  op32->forward(x, w, bias, y);
  op16->forward(x16, w, bias, y16);
  op32->forward(absolute(x), absolute(w), absolute(bias), y_abs);
  check_within("forward", y16, y, y_abs, u, 1.01 * u, underflow_error(type));
  Tensor dx(xs), dx16(xs, type), dx_abs(xs);
  op32->backward_data(dy, w, dx);
  op16->backward_data(dy16, w, dx16);
  op32->backward_data(absolute(dy), absolute(w), dx_abs);
  check_within("backward data", dx16, dx, dx_abs, u, 1.01 * u, underflow_error(type));
  Tensor dw(ws), dw16(ws), dw_abs(ws), db(Shape{g32.out_features}), db16(Shape{g32.out_features}),
      db_abs(Shape{g32.out_features});
  op32->backward_weights(x, dy, dw, db);
  op16->backward_weights(x16, dy16, dw16, db16);
  op32->backward_weights(absolute(x), absolute(dy), dw_abs, db_abs);
  check_within("weight gradient (fp32)", dw16, dw, dw_abs, 0.0, 4 * g32.batch * 0x1p-24);
  check_within("bias gradient (fp32)", db16, db, db_abs, 0.0, 4 * g32.batch * 0x1p-24);
}

}  // namespace tessera::testing
