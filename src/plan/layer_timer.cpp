#include "tessera/plan/layer_timer.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <memory>

#include "tessera/core/allocation_tracker.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/core/statistics.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/layers/overlap_choice.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/optim/optimizer_section.hpp"
#include "tessera/parallel/mpi_collectives.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::plan {
namespace {

/// Parameters for one timed layer: each its own tensors, with small random values (the
/// values do not change the time; zeros might, through denormals or sparsity shortcuts).
class TimingParameters final : public layers::ParameterRegistry {
 public:
  layers::Parameter* declare(const std::string& name, const Shape& shape, layers::Init, int64_t, int64_t) override {
    return add(name, shape, true);
  }
  layers::Parameter* declare_buffer(const std::string& name, const Shape& shape, layers::Init) override {
    return add(name, shape, false);
  }

 private:
  layers::Parameter* add(const std::string& name, const Shape& shape, bool trainable) {
    auto p = std::make_unique<layers::Parameter>();
    p->name = name;
    p->shape = shape;
    p->trainable = trainable;
    p->value = Tensor(shape, name);
    fill_random(p->value, params_.size() + 1);
    if (trainable) p->grad = Tensor(shape, name + ".grad");
    params_.push_back(std::move(p));
    return params_.back().get();
  }

 public:
  /// Bytes of the parameters, gradients and buffers declared.
  double bytes() const {
    double b = 0;
    for (const auto& p : params_)
      b += static_cast<double>(p->value.numel() + (p->trainable ? p->grad.numel() : 0)) * sizeof(float);
    return b;
  }

  static void fill_random(const Tensor& t, uint64_t stream) {
    std::vector<float> host(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < host.size(); ++i) host[i] = (rng::uniform(0x7E55E8A, stream, i) - 0.5f) * 0.1f;
    t.copy_from_host(host);
  }

 private:
  std::vector<std::unique_ptr<layers::Parameter>> params_;
};

/// The spec entry of the layer computing `parts` of its output channels: the key its layer
/// declares for them divided. Keys that only place the layer (name, inputs, distribution) go.
nlohmann::json local_config(const PlanNode& node, int64_t parts) {
  nlohmann::json c = node.config;
  for (const char* k : {"name", "inputs", "distribution", "backend"}) c.erase(k);
  const std::string& k = node.output_channels_key;
  if (!k.empty() && c.contains(k) && parts > 1) c[k] = c[k].get<int64_t>() / parts;
  return c;
}

std::unique_ptr<layers::Layer> make_local_layer(const PlanNode& node, int64_t parts) {
  nlohmann::json config = local_config(node, parts);
  ConfigObject cfg(config, "$.model.layers[" + node.name + "]");
  return model::make_layer(node.type, node.name, cfg);
}

}  // namespace

LayerTimer::LayerTimer(MachineProfile& profile, std::string backend, int64_t threads, parallel::Communicator measuring)
    : profile_(profile), backend_(std::move(backend)), threads_(threads), measuring_(std::move(measuring)) {}

namespace {
/// The key suffix of a layer timed in `type`: none for fp32, so that profiles written before
/// precisions keep their entries.
std::string type_suffix(ElementType type) {
  return type == ElementType::fp32 ? "" : std::string("|") + element_type_name(type);
}
}  // namespace

std::string LayerTimer::key(const PlanNode& node, const LocalWork& work) const {
  std::string k = node.backend.value_or(backend_) + "|t" + std::to_string(threads_) + "|r" +
                  std::to_string(measuring_.size()) + "|" + local_config(node, work.output_channel_parts).dump();
  for (const Shape& s : work.inputs) k += "|" + s.str();
  return (work.input_gradient ? k : k + "|no-input-gradient") + type_suffix(node.precision);
}

bool LayerTimer::cached(const PlanNode& node, const LocalWork& work) const {
  return profile_.layer_times.count(key(node, work)) > 0;
}

LayerTime LayerTimer::cached_or_measured(const std::string& key, const std::string& label, const PlanNode& node,
                                         const std::function<std::unique_ptr<layers::Layer>()>& make,
                                         const LocalWork& work) {
  if (auto it = profile_.layer_times.find(key); it != profile_.layer_times.end()) return it->second;
  if (profile_.origin == "published") return roofline(node, work);
  if (on_measure) {
    std::string shapes;
    for (const Shape& s : work.inputs) shapes += (shapes.empty() ? "" : ", ") + s.str();
    on_measure(
        label + " on " + shapes +
        (work.output_channel_parts > 1 ? ", 1/" + std::to_string(work.output_channel_parts) + " of its filters" : ""));
  }
  measuring_.barrier();
  const LayerTime t = measure("layer '" + node.name + "'", make, work, node.backend.value_or(backend_),
                              parallel::ProcessGrid(), {}, node.precision);
  profile_.layer_times[key] = t;
  ++measured_;
  return t;
}

LayerTime LayerTimer::time(const PlanNode& node, const LocalWork& work) {
  return cached_or_measured(
      key(node, work), node.name + " (" + node.type + ")", node,
      [&] { return make_local_layer(node, work.output_channel_parts); }, work);
}

LayerTime LayerTimer::time_fused(const PlanNode& conv, const PlanNode& pool, const LocalWork& work) {
  nlohmann::json pool_config = pool.config;
  for (const char* k : {"name", "inputs", "distribution", "backend"}) pool_config.erase(k);
  const std::string k = "fused|" + key(conv, work) + "|" + pool.type + pool_config.dump();
  return cached_or_measured(
      k, conv.name + "+" + pool.name + " (fused)", conv,
      [&] {
        auto c = make_local_layer(conv, work.output_channel_parts);
        auto p = make_local_layer(pool, 1);
        Shape one = work.inputs.at(0);
        one[0] = 1;
        auto fused = c->fused_with_max_pool(pool.name, *p->max_pool_options(), one);
        if (!fused) throw Error("internal: " + conv.name + " no longer fuses with " + pool.name);
        return fused;
      },
      work);
}

bool LayerTimer::measures_distributed(const parallel::Distribution& d) const {
  return profile_.origin != "published" && measuring_.size() == d.ranks() && (d.is_spatial() || d.splits_channels());
}

LayerTime LayerTimer::time_distributed(const PlanNode& node, const parallel::Distribution& d,
                                       const std::vector<Shape>& local_inputs, bool input_gradient) {
  std::string k = "grid|" + d.str() + "|" + node.backend.value_or(backend_) + "|t" + std::to_string(threads_) + "|" +
                  local_config(node, 1).dump();
  for (const Shape& s : node.global_inputs) k += "|" + s.str();
  if (!input_gradient) k += "|no-input-gradient";
  k += type_suffix(node.precision);
  if (auto it = profile_.layer_times.find(k); it != profile_.layer_times.end()) return it->second;
  if (on_measure) on_measure(node.name + " (" + node.type + ") split " + d.str() + " over the measuring ranks");
  measuring_.barrier();
  const parallel::ProcessGrid grid(d, measuring_, "layer '" + node.name + "'");
  LocalWork work;
  work.inputs = local_inputs;
  work.input_gradient = input_gradient;
  const LayerTime t = measure(
      "layer '" + node.name + "'", [&] { return make_local_layer(node, 1); }, work, node.backend.value_or(backend_),
      grid, node.global_inputs, node.precision);
  profile_.layer_times[k] = t;
  ++measured_;
  return t;
}

double LayerTimer::allreduce_seconds(int64_t bytes, ElementType type, int64_t bucket_bytes) {
  // The key names the sum the gradient reducer runs; "allreduce|" entries of older profiles
  // timed MPI_Allreduce, whose algorithm can take twice as long across a network, and
  // "gradient_sum|" entries without a bucket one nonblocking sum of the whole buffer: across 2
  // emulated nodes (2026-12-07) 11.9 MB took 1.2 s in one sum, 0.88 s in 4 MiB buckets, and
  // training's step with that sum 0.69-0.76 s.
  const int64_t bucket = bucket_bytes > 0 ? std::min(bucket_bytes, bytes) : bytes;
  const std::string k = "gradient_sum|r" + std::to_string(measuring_.size()) + "|" + std::to_string(bytes) + "|b" +
                        std::to_string(bucket) + type_suffix(type);
  if (auto it = profile_.layer_times.find(k); it != profile_.layer_times.end()) return it->second.forward;
  if (on_measure) on_measure("an allreduce of " + std::to_string(bytes) + " bytes over the measuring ranks");
  // The buffer is fp32 whatever the sum travels in, as in training.
  const int64_t count = std::max<int64_t>(1, bytes / static_cast<int64_t>(element_size(type)));
  const int64_t per_bucket = std::max<int64_t>(1, bucket / static_cast<int64_t>(element_size(type)));
  const size_t buckets = static_cast<size_t>((count + per_bucket - 1) / per_bucket);
  Tensor buffer(Shape{count}, "plan_allreduce");
  TimingParameters::fill_random(buffer, 3);
  // As the gradient reducer sums: its nonblocking sums of the buckets on host memory, a staged
  // MPI_Allreduce where the buffer lives on a device.
  parallel::MpiCollectives sums(measuring_, buckets, type);
  const auto sum = [&] {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
      for (size_t b = 0; b < buckets; ++b) {
        const int64_t first = static_cast<int64_t>(b) * per_bucket;
        sums.start_allreduce_sum(buffer.data() + first, std::min(per_bucket, count - first), b);
      }
      sums.wait_all();
    } else {
      sums.allreduce_sum(buffer);
    }
  };
  measuring_.barrier();
  sum();  // warm-up: connections, registration, the sum's buffer
  std::vector<double> t;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    measuring_.barrier();
    t.push_back(fenced_seconds(sum));
  }
  LayerTime entry;
  entry.forward = median(t);
  profile_.layer_times[k] = entry;
  ++measured_;
  return entry.forward;
}

double LayerTimer::optimizer_step(const nlohmann::json& optimizer, int64_t elements, double state_per_element) {
  nlohmann::json section = optimizer;
  section.erase("schedule");
  section.erase("lr_scaling");
  const std::string k = "optimizer|t" + std::to_string(threads_) + "|r" + std::to_string(measuring_.size()) + "|" +
                        section.dump() + "|" + std::to_string(elements);
  if (auto it = profile_.layer_times.find(k); it != profile_.layer_times.end()) return it->second.forward;
  const double bytes = static_cast<double>(elements) * sizeof(float) * (3 + 2 * state_per_element);
  if (profile_.origin == "published") return bytes / std::max(profile_.memory_bandwidth_per_rank, 1.0);
  if (on_measure) on_measure("the optimizer over " + std::to_string(elements) + " parameters");
  measuring_.barrier();
  auto step = optim::OptimizerSection(optimizer).make_optimizer();
  Tensor values(Shape{elements}, "plan_parameters"), grads(Shape{elements}, "plan_gradients");
  TimingParameters::fill_random(values, 1);
  TimingParameters::fill_random(grads, 2);
  step->bind(values, grads);
  step->step(1e-6f);
  std::vector<double> t;
  for (int r = 0; r < std::max(1, repetitions); ++r) t.push_back(fenced_seconds([&] { step->step(1e-6f); }));
  LayerTime entry;
  entry.forward = median(t);
  profile_.layer_times[k] = entry;
  ++measured_;
  return entry.forward;
}

LayerTime LayerTimer::roofline(const PlanNode& node, const LocalWork& work) const {
  std::unique_ptr<layers::Layer> layer = make_local_layer(node, work.output_channel_parts);
  const Shape out = layer->output_shape(work.inputs);
  double bytes = static_cast<double>(out.numel());
  for (const Shape& s : work.inputs) bytes += static_cast<double>(s.numel());
  bytes *= static_cast<double>(element_size(node.precision));
  const double flops = layer->forward_flops(work.inputs) * static_cast<double>(work.inputs.at(0)[0]);
  const double rate = profile_.peak_flops_per_rank * profile_.conv_efficiency;
  const double bandwidth = profile_.memory_bandwidth_per_rank;
  if (!(rate > 0) || !(bandwidth > 0))
    throw ConfigError("machine profile '" + profile_.name + "'",
                      "needs peak_flops_per_rank, conv_efficiency and memory_bandwidth_per_rank to estimate layers "
                      "it has not measured");
  // Backward: the input gradient and the weight gradient, each the forward's arithmetic, and
  // the tensors read and written again.
  const double forward = std::max(flops / rate, bytes / bandwidth);
  const double backward = std::max((work.input_gradient ? 2 : 1) * flops / rate, 2 * bytes / bandwidth);
  return LayerTime{forward, backward};
}

LayerTime LayerTimer::measure(const std::string& where, const std::function<std::unique_ptr<layers::Layer>()>& make,
                              const LocalWork& work, const std::string& backend, const parallel::ProcessGrid& grid,
                              const std::vector<Shape>& global_inputs, ElementType type) const {
  std::unique_ptr<layers::Layer> layer;
  registry::OpFactory factory(backend);
  layers::LayerContext ctx;
  ctx.ops = &factory;
  ctx.grid = grid;
  ctx.precision = type;
  TimingParameters params;
  Shape out;
  std::vector<Tensor> inputs, grads;
  for (size_t i = 0; i < work.inputs.size(); ++i) {
    inputs.emplace_back(work.inputs[i], type, "plan_input");
    TimingParameters::fill_random(inputs.back(), 100 + i);
    grads.push_back(work.input_gradient ? Tensor(work.inputs[i], type, "plan_grad_input") : Tensor());
  }
  // What the layer itself allocates (its parameters aside: the cost model counts those from
  // their declared sizes) from its set-up to after a forward and a backward.
  auto tracker = std::make_unique<AllocationTracker>();
  double own = 0;
  try {
    layer = make();
    out = grid.local_shape(layer->output_shape(global_inputs.empty() ? work.inputs : global_inputs), where);
    layer->setup(work.inputs, ctx, params);
    own = static_cast<double>(tracker->live_bytes());
  } catch (const Error& e) {
    throw ConfigError(where, std::string("cannot time it on its local shapes: ") + e.what());
  }
  const double params_bytes = own;
  tracker.reset();
  Tensor y(out, type, "plan_output"), dy(out, type, "plan_grad_output");
  TimingParameters::fill_random(dy, 99);
  layers::StepInfo step;
  step.batch = (global_inputs.empty() ? work.inputs : global_inputs).at(0)[0];
  auto forward = [&] { layer->forward(inputs, y, step); };
  auto backward = [&] { layer->backward(inputs, y, dy, grads, step); };
  // Warm-up: primitive creation, first touch of workspaces; a spatially split layer also
  // decides in its first training steps whether it overlaps its halo exchange
  // (OverlapChoice), so those steps pass before timing what it will do in training.
  tracker = std::make_unique<AllocationTracker>();
  forward();
  backward();
  const double state = static_cast<double>(tracker->live_bytes());
  tracker.reset();
  if (grid.spatial().size() > 1)
    for (int s = 0; s < layers::OverlapChoice::trial_steps; ++s) {
      forward();
      backward();
    }
  std::vector<double> f, b;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    f.push_back(fenced_seconds(forward));
    b.push_back(fenced_seconds(backward));
  }
  LayerTime t{median(f), median(b), 0.0};
  t.memory = std::max(0.0, params_bytes - params.bytes()) + state;
  return t;
}

}  // namespace tessera::plan
