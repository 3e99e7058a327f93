#include "tessera/layers/batch_norm.hpp"

#include "tessera/backends/kokkos/batch_norm_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::layers {

BatchNorm::BatchNorm(std::string name, double momentum, double epsilon)
    : Layer(name), parameter_name_(std::move(name)), momentum_(momentum), epsilon_(epsilon) {}

std::string BatchNorm::type() const { return activation_type_.empty() ? "batch_norm" : "batch_norm+" + activation_type_; }

std::unique_ptr<Layer> BatchNorm::fused_with_activation(const std::string& act_name, const ops::EltwiseDesc& act) const {
  if (epilogue_.active) return nullptr;
  auto fused = std::make_unique<BatchNorm>(name() + "+" + act_name, momentum_, epsilon_);
  fused->parameter_name_ = parameter_name_;
  fused->sync_ = sync_;
  fused->epilogue_ = {true, act.kind, act.alpha};
  fused->activation_type_ = ops::activation_info(act.kind).name;
  return fused;
}

std::unique_ptr<Layer> BatchNorm::from_json(const std::string& name, ConfigObject& cfg, int /*spatial_rank*/) {
  const double momentum = cfg.number_in("momentum", 0.0, 1.0, 0.1);
  const double epsilon = cfg.number_in("epsilon", 0.0, 1.0, 1e-5);
  const bool sync = cfg.boolean("sync", false);
  if (!(epsilon > 0.0)) throw ConfigError(cfg.path_of("epsilon"), "must be positive");
  auto layer = std::make_unique<BatchNorm>(name, momentum, epsilon);
  layer->sync_ = sync;
  return layer;
}

LayerTraits BatchNorm::traits() const {
  LayerTraits t;
  t.spatial_split = true;
  t.channel_split = true;
  t.op_kinds = {ops::OpKind::batch_norm};
  t.precisions = {ElementType::fp32, ElementType::bf16};
  return t;
}

std::optional<LayerOp> BatchNorm::backend_op(const std::vector<Shape>& inputs) const {
  const Shape& x = inputs.at(0);
  LayerOp op;
  op.kind = ops::OpKind::batch_norm;
  op.batch_norm.channels = x[x.rank() - 1];
  op.batch_norm.rows = x.numel() / op.batch_norm.channels;
  op.batch_norm.epsilon = static_cast<float>(epsilon_);
  op.batch_norm.epilogue = epilogue_;
  return op;
}

Shape BatchNorm::output_shape(const std::vector<Shape>& inputs) const {
  require_shape(inputs.size() == 1, where() + ": expected one input, got " + std::to_string(inputs.size()));
  const Shape& s = inputs[0];
  require_shape(s.rank() == 2 || s.rank() == 4 || s.rank() == 5,
                where() + ": expected an input [N, C], [N, H, W, C] or [N, D, H, W, C], got " + s.str());
  return s;
}

void BatchNorm::declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) {
  const Shape s = output_shape(inputs);
  channels_ = s[s.rank() - 1];  // this rank's channels (a slice of them under a channel split)
  const int64_t all = whole_channels(s)[s.rank() - 1];
  const ParameterShard shard = ParameterShard::of(grid(), Shape{all}, 0, where());
  gamma_ = declare_shard(params, parameter_name_ + ".gamma", shard, Init::ones, all, all);
  beta_ = declare_shard(params, parameter_name_ + ".beta", shard, Init::zeros, all, all);
  running_mean_ = declare_shard(params, parameter_name_ + ".running_mean", shard, Init::zeros, 1, 1, true);
  running_var_ = declare_shard(params, parameter_name_ + ".running_var", shard, Init::ones, 1, 1, true);
}

void BatchNorm::reshape(const std::vector<Shape>& inputs) {
  const Shape s = output_shape(inputs);
  require_shape(s[s.rank() - 1] == channels_, where() + ": input " + s.str() + " does not have the " +
                                                  std::to_string(channels_) + " channels it was set up with");
  rows_ = s.numel() / channels_;
  samples_ = s[0];
  // A spatial group splits each of its samples, into blocks that may differ: the group's rows
  // are its samples' whole extent. Features are copies on every rank of the group.
  if (s.rank() == 2 || !grid().distribution().is_spatial()) {
    spatial_group_rows_ = rows_ * grid().spatial().size();
  } else {
    const auto whole = parallel::spatial_size_of(global_shape(s));
    spatial_group_rows_ = samples_ * whole[0] * whole[1] * whole[2];
  }
  ops::BatchNormGeometry g;
  g.rows = rows_;
  g.channels = channels_;
  g.epsilon = static_cast<float>(epsilon_);
  g.type = context().precision;
  g.epilogue = epilogue_;
  op_ = op_factory().batch_norm(g, name());
  ensure_shape(sums_, Shape{2 * channels_}, "tessera::batch_norm_sums");
  ensure_shape(grad_sums_, Shape{2 * channels_}, "tessera::batch_norm_grad_sums");
  ensure_shape(mean_, Shape{channels_}, "tessera::batch_norm_mean");
  ensure_shape(invstd_, Shape{channels_}, "tessera::batch_norm_invstd");
}

std::string BatchNorm::backend() const { return op_ ? op_->backend() : ""; }

const parallel::Communicator& BatchNorm::statistics_group() const {
  // A spatial group shares each sample, so its statistics always cover the whole group;
  // "sync" widens them to every sample of the mini-batch. Channels are independent: the
  // ranks of a channel group never share statistics.
  return sync_ ? grid().replicas() : grid().spatial();
}

double BatchNorm::group_rows(const StepInfo& step) const {
  // With "sync" the samples are the whole batch, whose sample groups may hold different
  // numbers of them (SampleShares).
  const double over_space = static_cast<double>(spatial_group_rows_);
  if (!sync_ || samples_ == 0) return over_space;
  const int64_t batch = step.batch > 0 ? step.batch : samples_ * grid().distribution().sample;
  return over_space / static_cast<double>(samples_) * static_cast<double>(batch);
}

void BatchNorm::forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) {
  const Tensor& x = inputs.at(0);
  if (step.mode == Mode::training) {
    require_shape(group_rows(step) > 1,
                  where() + ": training needs more than one value per channel, got input " + x.shape().str());
    op_->statistics(x, sums_);
    statistics_group().allreduce_sum(sums_);
    kokkos_backend::batch_norm_batch_statistics(sums_, group_rows(step), momentum_, epsilon_, mean_, invstd_,
                                                running_mean_->value, running_var_->value);
  } else {
    kokkos_backend::batch_norm_running_statistics(running_mean_->value, running_var_->value, epsilon_, mean_, invstd_);
  }
  op_->normalize(x, mean_, invstd_, gamma_->value, beta_->value, output);
}

void BatchNorm::backward(const std::vector<Tensor>& inputs, const Tensor& /*output*/, const Tensor& grad_output,
                         const std::vector<Tensor>& grad_inputs, const StepInfo& step) {
  const Tensor& x = inputs.at(0);
  op_->backward_statistics(x, grad_output, mean_, invstd_, grad_sums_);
  // Σdy is the gradient of beta and Σdy·x̂ that of gamma. They stay this rank's own sums: the
  // trainer sums parameter gradients over the ranks like every other gradient.
  deep_copy(beta_->grad, grad_sums_.slice(0, Shape{channels_}));
  deep_copy(gamma_->grad, grad_sums_.slice(channels_, Shape{channels_}));
  if (grad_inputs.at(0).empty()) return;
  const bool batch_stats = step.mode == Mode::training;
  // dx depends on the sums over every sample the statistics came from.
  if (batch_stats) statistics_group().allreduce_sum(grad_sums_);
  op_->backward_data(x, grad_output, mean_, invstd_, gamma_->value, grad_sums_,
                     batch_stats ? group_rows(step) : static_cast<double>(rows_), batch_stats, grad_inputs[0]);
}

}  // namespace tessera::layers
