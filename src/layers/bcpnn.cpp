#include "tessera/layers/bcpnn.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/parallel/traffic_counter.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::layers {
namespace {

kokkos_backend::BiasRegulation read_bias_regulation(ConfigObject& cfg) {
  kokkos_backend::BiasRegulation r;
  r.k_half = static_cast<float>(cfg.number_in("k_half", -1e6, 1.0, 1.0));
  r.p_min = static_cast<float>(cfg.number_in("p_min", 0.0, 1.0, 0.0));
  r.rate = static_cast<float>(cfg.number_in("rate", 0.0, 1.0, 0.0));
  cfg.finish();
  return r;
}

}  // namespace

Bcpnn::Bcpnn(std::string name, const BcpnnOptions& options) : Layer(std::move(name)), options_(options) {}

std::unique_ptr<Layer> Bcpnn::from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
  BcpnnOptions o;
  o.hypercolumns = cfg.integer_in("hypercolumns", 1, ops::kMaxExtent);
  o.minicolumns = cfg.integer_in("minicolumns", 1, ops::kMaxExtent);
  o.complementary = cfg.choice("encoding", {"complementary", "none"}, "complementary") == "complementary";
  if (o.complementary && cfg.has("input_minicolumns"))
    throw ConfigError(cfg.path_of("input_minicolumns"),
                      "is for \"encoding\": \"none\"; complementary pairs are hypercolumns of 2");
  o.input_minicolumns = o.complementary ? 2 : cfg.integer_in("input_minicolumns", 1, ops::kMaxExtent);
  o.density = cfg.number_in("density", 1e-6, 1.0, 1.0);
  o.trace_rate = static_cast<float>(cfg.number_in("trace_rate", 1e-9, 1.0, o.trace_rate));
  o.eps = static_cast<float>(cfg.number_in("eps", 1e-12, 0.1, o.eps));
  o.init_noise = static_cast<float>(cfg.number_in("init_noise", 0.0, 0.99, o.init_noise));
  if (cfg.has("bias_regulation")) {
    ConfigObject regulation = cfg.object("bias_regulation");
    o.bias_regulation = read_bias_regulation(regulation);
  }
  o.trace_precision = cfg.choice("trace_precision", {"fp32", "bf16"}, "fp32") == "bf16" ? ElementType::bf16
                                                                                      : ElementType::fp32;
  o.rewire_every = cfg.integer_in("rewire_every", 0, int64_t{1} << 40, 0);
  o.rewire_swaps = cfg.integer_in("rewire_swaps", 1, int64_t{1} << 20, o.rewire_swaps);
  if (o.rewire_every > 0 && o.density >= 1.0)
    throw ConfigError(cfg.path_of("rewire_every"),
                      "rewiring needs \"density\" below 1 (every input hypercolumn is connected already)");
  return std::make_unique<Bcpnn>(name, o);
}

std::optional<ValueDomain> Bcpnn::input_domain() const {
  if (!options_.complementary) return std::nullopt;
  return ValueDomain{0, 1, false};
}

LayerTraits Bcpnn::traits() const {
  LayerTraits t;
  t.mixes_channels = true;
  t.output_channels_key = "hypercolumns";  // its units are whole hypercolumns
  t.learns_locally = true;
  t.op_kinds = {ops::OpKind::inner_product};
  t.precisions = {ElementType::fp32, ElementType::bf16};
  return t;
}

int64_t Bcpnn::encoded_units(const Shape& input) const {
  const int64_t features = input.numel() / std::max<int64_t>(input[0], 1);
  return options_.complementary ? 2 * features : features;
}

std::optional<LayerOp> Bcpnn::backend_op(const std::vector<Shape>& inputs) const {
  LayerOp op;
  op.kind = ops::OpKind::inner_product;
  op.inner_product.batch = inputs.at(0)[0];
  op.inner_product.in_features = encoded_units(inputs.at(0));
  op.inner_product.out_features = options_.hypercolumns * options_.minicolumns;
  op.inner_product.type = context().precision;
  return op;
}

Shape Bcpnn::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  const Shape& s = inputs[0];
  require_shape(s.rank() >= 2, where() + ": expected an input [N, ...], got " + s.str());
  const int64_t features = s.numel() / std::max<int64_t>(s[0], 1);
  require_shape(options_.complementary || features % options_.input_minicolumns == 0,
                where() + ": " + std::to_string(features) + " input units are not whole hypercolumns of " +
                    std::to_string(options_.input_minicolumns) + " (\"input_minicolumns\")");
  return Shape{s[0], options_.hypercolumns * options_.minicolumns};
}

kokkos_backend::BcpnnTraceSettings Bcpnn::trace_settings() const {
  kokkos_backend::BcpnnTraceSettings s;
  s.input_minicolumns = options_.input_minicolumns;
  s.output_minicolumns = options_.minicolumns;
  s.eps = options_.eps;
  return s;
}

void Bcpnn::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  output_shape(inputs);
  inputs_ = encoded_units(inputs[0]);
  units_ = options_.hypercolumns * options_.minicolumns;
  in_columns_ = inputs_ / options_.input_minicolumns;
  const int64_t fan_in =
      std::clamp<int64_t>(std::llround(options_.density * static_cast<double>(in_columns_)), 1, in_columns_);
  const auto buffer = [&](const std::string& key, const Shape& shape, std::function<void(const Tensor&)> fill) {
    Parameter* p = params.declare_buffer(name() + "." + key, shape, Init::custom);
    p->synchronized = true;
    p->fill = std::move(fill);
    return p;
  };
  const float p_in = 1.0f / static_cast<float>(options_.input_minicolumns);
  const float p_out = 1.0f / static_cast<float>(options_.minicolumns);
  p_i_ = buffer("p_i", Shape{inputs_}, [p_in](const Tensor& t) { t.fill(p_in); });
  p_j_ = buffer("p_j", Shape{units_}, [p_out](const Tensor& t) { t.fill(p_out); });
  p_ij_ = buffer("p_ij", Shape{units_, inputs_}, [this](const Tensor& t) {
    kokkos_backend::jittered_joint_trace(p_i_->value, p_j_->value, options_.init_noise, context().seed,
                                         rng::stream_of(name() + ".p_ij"), t);
  });
  mask_ = buffer("mask", Shape{options_.hypercolumns, in_columns_}, [this, fan_in](const Tensor& t) {
    t.copy_from_host(ConnectionMask::random(options_.hypercolumns, in_columns_, fan_in, context().seed,
                                            rng::stream_of(name() + ".mask"))
                         .values());
  });
  k_beta_ = buffer("k_beta", Shape{units_}, [](const Tensor& t) { t.fill(1.0f); });
  // Derived from the traces declared above, which the store has filled by then.
  weight_ = buffer("weight", Shape{units_, inputs_}, [this](const Tensor&) { derive_weights(); });
  bias_ = buffer("bias", Shape{units_}, [this](const Tensor&) { derive_bias(false); });
}

void Bcpnn::reshape(const std::vector<Shape>& inputs) {
  output_shape(inputs);
  const Shape& x = inputs.at(0);
  require_shape(encoded_units(x) == inputs_, where() + ": input " + x.str() + " does not have the " +
                                                 std::to_string(inputs_) + " units it was set up with");
  require_shape(grid().spatial().is_serial() && grid().channel_parts() == 1,
                where() + ": splits over samples only, not in space or over channels");
  if (options_.complementary) ensure_shape(encoded_, Shape{x[0], inputs_}, name() + ".encoded", context().precision);
  ensure_shape(sums_, Shape{(inputs_ + 1) * units_ + inputs_}, name() + ".sums");
  ensure_shape(mutual_information_, Shape{options_.hypercolumns, in_columns_}, name() + ".mutual_information");
  ops::InnerProductGeometry g;
  g.batch = x[0];
  g.in_features = inputs_;
  g.out_features = units_;
  g.type = context().precision;
  op_ = op_factory().inner_product(g, name());
}

std::string Bcpnn::backend() const { return op_ ? op_->backend() : ""; }

double Bcpnn::forward_flops(const std::vector<Shape>& inputs) const {
  const int64_t in = inputs.empty() ? inputs_ : encoded_units(inputs[0]);
  return 2.0 * static_cast<double>(in) * static_cast<double>(options_.hypercolumns * options_.minicolumns);
}

void Bcpnn::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) {
  const Tensor& x = inputs.at(0);
  const Tensor flat = x.reshaped(Shape{x.shape()[0], x.numel() / std::max<int64_t>(x.shape()[0], 1)});
  if (options_.complementary) kokkos_backend::complementary_encode(flat, encoded_);
  const Tensor& units_in = options_.complementary ? encoded_ : flat;
  {
    ProfileRegion r(name() + "/support");
    op_->forward(units_in, weight_->value, bias_->value, output);
    kokkos_backend::hypercolumn_softmax(output, options_.minicolumns, output);
  }
  if (step.mode == Mode::training && step.local_learning) learn(units_in, output, step);
}

void Bcpnn::learn(const Tensor& x, const Tensor& y, const StepInfo& step) {
  const Tensor s_ij = sums_.slice(0, Shape{units_, inputs_});
  const Tensor s_j = sums_.slice(units_ * inputs_, Shape{units_});
  const Tensor s_i = sums_.slice((inputs_ + 1) * units_, Shape{inputs_});
  {
    // Regions named after the layer, so a profile (--profile) splits its learning step.
    ProfileRegion r(name() + "/sums");
    // Σ_n y_j·x_i is the op's weight gradient for an output gradient y, and Σ_n y_j its bias's.
    op_->backward_weights(x, y, s_ij, s_j);
    kokkos_backend::column_sums(x, s_i);
  }
  const parallel::Communicator& samples = grid().samples();
  if (!samples.is_serial()) {
    ProfileRegion r(name() + "/allreduce");
    const double ranks = static_cast<double>(samples.size());
    parallel::TrafficCounter::add(parallel::TrafficCounter::local_learning,
                                  2.0 * (ranks - 1.0) / ranks * static_cast<double>(sums_.bytes()));
    samples.allreduce_sum(sums_);
  }
  ProfileRegion r(name() + "/traces_and_weights");
  const int64_t batch = step.batch > 0 ? step.batch : x.shape()[0] * samples.size();
  const float rate = options_.trace_rate, scale = rate / static_cast<float>(batch);
  kokkos_backend::axpby(scale, s_j, 1.0f - rate, p_j_->value);
  kokkos_backend::axpby(scale, s_i, 1.0f - rate, p_i_->value);
  for (const Parameter* p : {p_j_, p_i_}) kokkos_backend::round_to(p->value, options_.trace_precision);
  // The joint trace and the weights in one pass: they are the layer's largest arrays.
  kokkos_backend::bcpnn_joint_step(s_ij, rate, scale, options_.trace_precision, p_i_->value, p_j_->value,
                                   p_ij_->value, mask_->value, trace_settings(), weight_->value);
  if (options_.rewire_every > 0 && (step.step + 1) % options_.rewire_every == 0) {
    rewire();
    derive_weights();  // of the new connections
  }
  derive_bias(true);
}

void Bcpnn::rewire() {
  ProfileRegion r(name() + "/rewire");
  kokkos_backend::hypercolumn_mutual_information(p_i_->value, p_j_->value, p_ij_->value, trace_settings(),
                                                 mutual_information_);
  ConnectionMask mask = connections();
  swaps_made_ += mask.rewire(mutual_information_.to_host(), options_.rewire_swaps);
  mask_->value.copy_from_host(mask.values());
}

ConnectionMask Bcpnn::connections() const {
  return ConnectionMask::of(options_.hypercolumns, in_columns_, mask_->value.to_host());
}

void Bcpnn::derive_weights() {
  kokkos_backend::bcpnn_weights(p_i_->value, p_j_->value, p_ij_->value, mask_->value, trace_settings(),
                                weight_->value);
}

void Bcpnn::derive_bias(bool move_gains) {
  kokkos_backend::BiasRegulation regulation = options_.bias_regulation;
  if (!move_gains) regulation.rate = 0.0f;  // the gains stay where they are
  kokkos_backend::bcpnn_bias(p_j_->value, regulation, trace_settings(), k_beta_->value, bias_->value);
}

void Bcpnn::backward(const std::vector<Tensor>& /*inputs*/, const Tensor& /*output*/, const Tensor& /*grad_output*/,
                     const std::vector<Tensor>& grad_inputs, const StepInfo& /*step*/) {
  // The local rule needs no gradient, and none flows through it to earlier layers.
  if (!grad_inputs.at(0).empty()) grad_inputs[0].zero();
}

}  // namespace tessera::layers
