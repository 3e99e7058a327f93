#include "tessera/bench/op_benchmark.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/kokkos_compat.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/model/parameter_store.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::bench {
namespace {

/// Counter-based uniform values in [-scale, scale): constant inputs can take faster paths
/// (zero skipping, denormal-free) than training data does.
void fill_uniform(const Tensor& t, float scale, uint64_t stream) {
  auto v = t.view();
  Kokkos::parallel_for(
      "tessera::bench::fill", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) {
        v(i) = scale * (2.0f * rng::uniform(42, stream, static_cast<uint64_t>(i)) - 1.0f);
      });
}

/// Uniform values of `type` (the fp32 values rounded into it): activations in the op's type,
/// weights and bias fp32 in every precision, as training has them.
Tensor random_tensor(const Shape& shape, float scale, uint64_t stream, ElementType type = ElementType::fp32) {
  Tensor t(shape);
  fill_uniform(t, scale, stream);
  if (type == ElementType::fp32) return t;
  Tensor typed(shape, type);
  deep_copy(typed, t);
  return typed;
}

/// The bytes the tensors hold, in their types.
double bytes_of(std::initializer_list<const Tensor*> tensors) {
  double total = 0;
  for (const Tensor* t : tensors) total += static_cast<double>(t->bytes());
  return total;
}

OpTiming entry(const OpCase& op, const std::string& op_class, const std::string& backend) {
  OpTiming t;
  t.type = case_type(op);
  t.layer = op.layer;
  t.op_class = op_class;
  t.shape = op.shape();
  t.backend = backend;
  return t;
}

std::vector<OpTiming> declined(const OpCase& op, const std::string& backend, const std::string& why) {
  std::vector<OpTiming> out;
  for (const auto& c : op_classes(op)) {
    OpTiming t = entry(op, c, backend);
    t.supported = false;
    t.why = why;
    out.push_back(t);
  }
  return out;
}

/// The three directions of a weighted op (forward, backward-data, backward-weights), each with
/// the same work and the bytes of the tensors it reads and writes: x, w, y being the op's
/// input, weights and output in the forward direction.
std::vector<OpTiming> time_three_directions(const OpCase& op, const std::string& backend,
                                            const std::function<void()> (&calls)[3], double flops, const Tensor& x,
                                            const Tensor& w, const Tensor& y, const TimingOptions& o) {
  const std::vector<std::string> classes = op_classes(op);
  const double bytes = bytes_of({&x, &w, &y});  // each direction reads two of them and writes the third
  std::vector<OpTiming> out;
  for (size_t k = 0; k < 3; ++k) {
    OpTiming t = entry(op, classes[k], backend);
    t.flops = flops;
    t.bytes = bytes;
    t.seconds = median_seconds(o, calls[k]);
    out.push_back(t);
  }
  return out;
}

std::vector<OpTiming> time_conv(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  const ops::ConvGeometry& g = op.conv;
  std::string why;
  auto conv = backend.make_conv(g, &why);
  if (!conv) return declined(op, backend.name(), why);
  const float w_scale = 1.0f / std::sqrt(static_cast<float>(g.kernel_volume() * g.in_channels));
  const ElementType type = g.type;
  Tensor x = random_tensor(g.input_shape(), 1.0f, 1, type), w = random_tensor(g.weight_shape(), w_scale, 2);
  Tensor b = random_tensor(Shape{g.out_channels}, 0.1f, 3), y(g.output_shape(), type);
  Tensor dy = random_tensor(g.output_shape(), 1.0f, 4, type), dx(g.input_shape(), type), dw(g.weight_shape()),
         db(Shape{g.out_channels});
  const std::function<void()> calls[] = {[&] { conv->forward(x, w, b, y); }, [&] { conv->backward_data(dy, w, dx); },
                                         [&] { conv->backward_weights(x, dy, dw, db); }};
  return time_three_directions(op, backend.name(), calls, g.forward_flops(), x, w, y, o);
}

std::vector<OpTiming> time_pool(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  const ops::PoolGeometry& g = op.pool;
  std::string why;
  auto pool = backend.make_pool(g, &why);
  if (!pool) return declined(op, backend.name(), why);
  Tensor x = random_tensor(g.input_shape(), 1.0f, 1, g.type), y(g.output_shape(), g.type);
  Tensor dy = random_tensor(g.output_shape(), 1.0f, 4, g.type), dx(g.input_shape(), g.type);
  const double window = static_cast<double>(g.kernel[0] * g.kernel[1] * g.kernel[2]);
  const auto classes = op_classes(op);
  OpTiming f = entry(op, classes[0], backend.name()), b = entry(op, classes[1], backend.name());
  f.flops = window * static_cast<double>(y.numel());
  f.bytes = bytes_of({&x, &y});
  f.seconds = median_seconds(o, [&] { pool->forward(x, y); });
  // Backward needs the forward's record (argmax) on the same instance: the forward above left it.
  b.flops = static_cast<double>(x.numel());
  b.bytes = bytes_of({&dy, &dx});
  b.seconds = median_seconds(o, [&] { pool->backward(x, dy, dx); });
  return {f, b};
}

std::vector<OpTiming> time_eltwise(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  std::string why;
  auto act = backend.make_eltwise(op.eltwise, &why);
  if (!act) return declined(op, backend.name(), why);
  const Shape s{op.eltwise_elements};
  const ElementType type = op.eltwise.type;
  Tensor x = random_tensor(s, 1.0f, 1, type), y(s, type), dy = random_tensor(s, 1.0f, 4, type), dx(s, type);
  const int64_t n = op.eltwise_elements;
  const auto classes = op_classes(op);
  OpTiming f = entry(op, classes[0], backend.name()), b = entry(op, classes[1], backend.name());
  f.flops = static_cast<double>(n);
  f.bytes = bytes_of({&x, &y});
  f.seconds = median_seconds(o, [&] { act->forward(x, y); });
  b.flops = static_cast<double>(n);
  b.bytes = bytes_of({&x, &dy, &dx});
  b.seconds = median_seconds(o, [&] { act->backward(x, dy, dx); });
  return {f, b};
}

std::vector<OpTiming> time_batch_norm(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  const ops::BatchNormGeometry& g = op.batch_norm;
  std::string why;
  auto bn = backend.make_batch_norm(g, &why);
  if (!bn) return declined(op, backend.name(), why);
  const Shape s{g.rows, g.channels}, c{g.channels}, c2{2 * g.channels};
  Tensor x = random_tensor(s, 1.0f, 1, g.type), y(s, g.type), dy = random_tensor(s, 1.0f, 4, g.type), dx(s, g.type);
  Tensor sums(c2), grad_sums(c2), mean = random_tensor(c, 0.1f, 5), invstd(c), gamma(c),
                                  beta = random_tensor(c, 0.1f, 6);
  invstd.fill(1.0f);
  gamma.fill(1.0f);
  const int64_t n = s.numel();
  const auto classes = op_classes(op);
  OpTiming f = entry(op, classes[0], backend.name()), b = entry(op, classes[1], backend.name());
  // Forward: statistics (x, x², two sums) then normalise (subtract, scale, shift).
  f.flops = 7.0 * static_cast<double>(n);
  f.bytes = bytes_of({&x, &x, &y});
  f.seconds = median_seconds(o, [&] {
    bn->statistics(x, sums);
    bn->normalize(x, mean, invstd, gamma, beta, y);
  });
  // Backward: two sums over dy and x̂, then dx from both.
  b.flops = 11.0 * static_cast<double>(n);
  b.bytes = bytes_of({&x, &dy, &x, &dy, &dx});
  b.seconds = median_seconds(o, [&] {
    bn->backward_statistics(x, dy, mean, invstd, grad_sums);
    bn->backward_data(x, dy, mean, invstd, gamma, grad_sums, static_cast<double>(g.rows), true, dx);
  });
  return {f, b};
}

std::vector<OpTiming> time_inner_product(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  const ops::InnerProductGeometry& g = op.inner_product;
  std::string why;
  auto ip = backend.make_inner_product(g, &why);
  if (!ip) return declined(op, backend.name(), why);
  const float w_scale = 1.0f / std::sqrt(static_cast<float>(g.in_features));
  Tensor x = random_tensor(Shape{g.batch, g.in_features}, 1.0f, 1, g.type);
  Tensor w = random_tensor(Shape{g.out_features, g.in_features}, w_scale, 2);
  Tensor b = random_tensor(Shape{g.out_features}, 0.1f, 3), y(Shape{g.batch, g.out_features}, g.type);
  Tensor dy = random_tensor(y.shape(), 1.0f, 4, g.type), dx(x.shape(), g.type), dw(w.shape()), db(b.shape());
  const std::function<void()> calls[] = {[&] { ip->forward(x, w, b, y); }, [&] { ip->backward_data(dy, w, dx); },
                                         [&] { ip->backward_weights(x, dy, dw, db); }};
  const double flops =
      2.0 * static_cast<double>(g.batch) * static_cast<double>(g.in_features) * static_cast<double>(g.out_features);
  return time_three_directions(op, backend.name(), calls, flops, x, w, y, o);
}

/// A transposed convolution runs the adjoint convolution's op (op.conv) with the directions
/// exchanged, as layers::ConvTranspose does: its input x is that op's output gradient and its
/// output y that op's input gradient. The bias is added, and its gradient summed, by the
/// Kokkos kernels the layer calls.
std::vector<OpTiming> time_conv_transpose(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  const ops::ConvGeometry& g = op.conv;
  std::string why;
  auto conv = backend.make_conv(g, &why);
  if (!conv) return declined(op, backend.name(), why);
  const float w_scale = 1.0f / std::sqrt(static_cast<float>(g.kernel_volume() * g.out_channels));
  // Layer-side names: x [adjoint output shape], y and dy [adjoint input shape].
  const ElementType type = g.type;
  Tensor x = random_tensor(g.output_shape(), 1.0f, 1, type), w = random_tensor(g.weight_shape(), w_scale, 2);
  Tensor b = random_tensor(Shape{g.in_channels}, 0.1f, 3), y(g.input_shape(), type);
  Tensor dy = random_tensor(g.input_shape(), 1.0f, 4, type), dx(g.output_shape(), type), dw(g.weight_shape()),
         db(Shape{g.in_channels});
  kokkos_backend::ConvWorkspace<float> bias_workspace;
  const std::function<void()> calls[] = {[&] {
                                           conv->backward_data(x, w, y);
                                           if (op.bias) kokkos_backend::add_channel_bias(b, y);
                                         },
                                         [&] { conv->forward(dy, w, Tensor(), dx); },
                                         [&] {
                                           conv->backward_weights(dy, x, dw, Tensor());
                                           if (op.bias) kokkos_backend::sum_channels(dy, db, bias_workspace);
                                         }};
  return time_three_directions(op, backend.name(), calls, g.forward_flops(), x, w, y, o);
}

/// Nominal arithmetic of a layer that runs its own kernels: copies (flatten, concat) do
/// none; a sum or a scaling counts one per element it produces.
double layer_flops(const OpCase& op, bool backward) {
  int64_t in = 0;
  for (const Shape& s : op.inputs) in += s.numel();
  const int64_t out = op.output.numel();
  const std::string& t = op.layer_type;
  if (t == "dropout") return static_cast<double>(out);
  if (t == "add") return backward ? 0.0 : static_cast<double>(in - out);
  if (t.rfind("global_avg_pool", 0) == 0) return static_cast<double>(in);
  return 0.0;
}

/// The layer itself, made from its spec entry and set up at its shape with `backend`'s op
/// factory (its kernels are Kokkos code whichever backend the model runs with): forward, then
/// backward with the input gradients training computes.
std::vector<OpTiming> time_layer(const OpCase& op, ops::Backend& backend, const TimingOptions& o) {
  registry::OpFactory factory(backend.name());
  layers::LayerContext context = op.context;
  context.ops = &factory;
  ConfigObject cfg(op.layer_config, op.layer_path);
  std::unique_ptr<layers::Layer> layer = model::make_layer(op.layer_type, op.layer, cfg);
  model::ParameterStore params;
  layer->setup(op.inputs, context, params);
  params.finalize(context.seed);
  // The layer's tensors in its precision (a layer of a 16-bit run that computes only in fp32
  // runs in fp32, as in training).
  const ElementType type = context.precision;
  std::vector<Tensor> inputs, grads;
  double in_bytes = 0, grad_bytes = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    inputs.push_back(random_tensor(op.inputs[k], 1.0f, 1 + k, type));
    in_bytes += static_cast<double>(inputs.back().bytes());
    const bool grad = k < op.input_grads.size() && op.input_grads[k];
    grads.push_back(grad ? Tensor(op.inputs[k], type) : Tensor());
    if (grad) grad_bytes += static_cast<double>(grads.back().bytes());
  }
  Tensor y(op.output, type), dy = random_tensor(op.output, 1.0f, 100, type);
  layers::StepInfo step;
  step.mode = layers::Mode::training;
  step.batch = op.batch;
  const auto classes = op_classes(op);
  OpTiming f = entry(op, classes[0], backend.name()), b = entry(op, classes[1], backend.name());
  f.flops = layer_flops(op, false);
  f.bytes = in_bytes + static_cast<double>(y.bytes());
  f.seconds = median_seconds(o, [&] { layer->forward(inputs, y, step); });
  b.flops = layer_flops(op, true);
  b.bytes = static_cast<double>(dy.bytes()) + grad_bytes;
  b.seconds = median_seconds(o, [&] { layer->backward(inputs, y, dy, grads, step); });
  return {f, b};
}

}  // namespace

ElementType case_type(const OpCase& op) {
  if (op.runner == CaseRunner::layer) return op.context.precision;
  if (op.runner == CaseRunner::conv_transpose) return op.conv.type;
  switch (op.kind) {
    case ops::OpKind::conv: return op.conv.type;
    case ops::OpKind::pool: return op.pool.type;
    case ops::OpKind::eltwise: return op.eltwise.type;
    case ops::OpKind::batch_norm: return op.batch_norm.type;
    case ops::OpKind::inner_product: return op.inner_product.type;
  }
  return ElementType::fp32;
}


std::vector<std::string> op_classes(const OpCase& op) {
  if (op.runner == CaseRunner::conv_transpose)
    return {"conv_transpose_forward", "conv_transpose_backward_data", "conv_transpose_backward_weights"};
  if (op.runner == CaseRunner::layer) {
    // One class per layer kind, 2D and 3D together ("global_avg_pool", "concat", ...).
    std::string stem = op.layer_type;
    if (stem.size() > 2 && (stem.compare(stem.size() - 2, 2, "2d") == 0 || stem.compare(stem.size() - 2, 2, "3d") == 0))
      stem.resize(stem.size() - 2);
    if (!stem.empty() && stem.back() == '_') stem.pop_back();
    return {stem + "_forward", stem + "_backward"};
  }
  return op_classes(op.kind);
}

std::vector<std::string> op_classes(ops::OpKind kind) {
  switch (kind) {
    case ops::OpKind::conv: return {"conv_forward", "conv_backward_data", "conv_backward_weights"};
    case ops::OpKind::pool: return {"pool_forward", "pool_backward"};
    case ops::OpKind::eltwise: return {"activation_forward", "activation_backward"};
    case ops::OpKind::batch_norm: return {"batch_norm_forward", "batch_norm_backward"};
    case ops::OpKind::inner_product:
      return {"inner_product_forward", "inner_product_backward_data", "inner_product_backward_weights"};
  }
  return {};
}

double median_seconds(const TimingOptions& options, const std::function<void()>& f) {
  if (options.reps < 1) throw Error("op timing: reps must be at least 1");
  for (int w = 0; w < options.warmup; ++w) f();
  Kokkos::fence();
  std::vector<double> t;
  for (int r = 0; r < options.reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

std::vector<OpTiming> time_op_case(const OpCase& op, ops::Backend& backend, const TimingOptions& options) {
  if (op.runner == CaseRunner::conv_transpose) return time_conv_transpose(op, backend, options);
  if (op.runner == CaseRunner::layer) return time_layer(op, backend, options);
  switch (op.kind) {
    case ops::OpKind::conv: return time_conv(op, backend, options);
    case ops::OpKind::pool: return time_pool(op, backend, options);
    case ops::OpKind::eltwise: return time_eltwise(op, backend, options);
    case ops::OpKind::batch_norm: return time_batch_norm(op, backend, options);
    case ops::OpKind::inner_product: return time_inner_product(op, backend, options);
  }
  return {};
}

}  // namespace tessera::bench
