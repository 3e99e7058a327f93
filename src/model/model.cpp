#include "tessera/model/model.hpp"

#include <cstdio>
#include <map>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/layers/conv_max_pool.hpp"
#include "tessera/layers/redistribute.hpp"
#include "tessera/backends/kokkos/elementwise_kernels.hpp"

namespace tessera::model {
namespace {

parallel::Distribution read_distribution(ConfigObject cfg) {
  parallel::Distribution d;
  d.sample = static_cast<int>(cfg.integer_in("sample", 1, 1 << 20, 1));
  d.channel = static_cast<int>(cfg.integer_in("channel", 1, 1 << 20, 1));
  d.depth = static_cast<int>(cfg.integer_in("depth", 1, 1 << 20, 1));
  d.height = static_cast<int>(cfg.integer_in("height", 1, 1 << 20, 1));
  d.width = static_cast<int>(cfg.integer_in("width", 1, 1 << 20, 1));
  cfg.finish();
  return d;
}

int64_t lcm(int64_t a, int64_t b) { return a / std::gcd(a, b) * b; }

}  // namespace

std::unique_ptr<Model> Model::from_json(ConfigObject& spec, const BuildOptions& options) {
  auto m = std::make_unique<Model>();

  auto input = spec.object("input");
  const int64_t channels = input.integer_in("channels", 1, 1 << 20, 1);
  if (input.has("size")) {
    const auto size = input.integer_list("size");
    if (size.size() != 2 && size.size() != 3)
      throw ConfigError(input.path_of("size"), "expected 2 (H, W) or 3 (D, H, W) sizes, got " +
                                                    std::to_string(size.size()));
    for (auto s : size)
      if (s < 1) throw ConfigError(input.path_of("size"), "sizes must be positive");
    std::vector<int64_t> dims(size);
    dims.push_back(channels);
    m->sample_shape_ = Shape(dims);
  } else {
    m->sample_shape_ = Shape{channels};
  }
  input.finish();

  const std::string default_backend = spec.string("backend", options.backend);
  const bool overlap_halos = spec.boolean("halo_overlap", true);
  const bool fuse_conv_max_pool = spec.boolean("fuse_conv_max_pool", true);
  const auto init_scheme = spec.choice("init", {"he_normal", "uniform_fan_in"}, "he_normal") == "he_normal"
                               ? layers::InitScheme::he_normal
                               : layers::InitScheme::uniform_fan_in;
  parallel::Distribution default_distribution;
  default_distribution.sample = options.group.size();  // data parallelism unless the spec says otherwise
  if (spec.has("distribution")) default_distribution = read_distribution(spec.object("distribution"));
  // One grid (and its sub-communicators) per distinct distribution.
  std::map<std::string, parallel::ProcessGrid> grids;
  auto grid_for = [&](const parallel::Distribution& d, const std::string& path) -> const parallel::ProcessGrid& {
    auto it = grids.find(d.str());
    if (it == grids.end()) it = grids.emplace(d.str(), parallel::ProcessGrid(d, options.group, path)).first;
    m->batch_multiple_ = lcm(m->batch_multiple_, d.sample);
    return it->second;
  };
  m->input_grid_ = grid_for(default_distribution, spec.path_of("distribution"));

  std::map<std::string, int> index_of;
  std::map<std::string, registry::OpFactory*> factory_of;
  auto factory = [&](const std::string& backend, const std::string& path) {
    auto it = factory_of.find(backend);
    if (it != factory_of.end()) return it->second;
    try {
      m->factories_.push_back(std::make_unique<registry::OpFactory>(backend));
    } catch (const Error& e) {
      throw ConfigError(path, e.what());
    }
    return factory_of[backend] = m->factories_.back().get();
  };

  // Shapes are checked with the smallest batch every distribution can split; reshape_for()
  // sets the real batch later.
  auto global_shape_of = [&](int node) {
    if (node != kModelInput) return m->nodes_[static_cast<size_t>(node)].global_output;
    std::vector<int64_t> dims{1};
    for (auto d : m->sample_shape_.dims()) dims.push_back(d);
    return Shape(dims);
  };
  // A layer whose distribution differs from its producer's reads the producer's output through
  // a redistribution node (one per producer and destination).
  std::map<std::pair<int, std::string>, int> moved;
  auto redistributed = [&](int producer, const parallel::ProcessGrid& to, const std::string& path) {
    const parallel::ProcessGrid& from = producer == kModelInput ? m->input_grid_ : m->nodes_[static_cast<size_t>(producer)].grid;
    if (from.distribution() == to.distribution()) return producer;
    const auto key = std::make_pair(producer, to.distribution().str());
    if (auto it = moved.find(key); it != moved.end()) return it->second;
    const std::string from_name = producer == kModelInput ? "input" : m->nodes_[static_cast<size_t>(producer)].layer->name();
    Node node;
    node.layer = std::make_unique<layers::Redistribute>(from_name + "->" + to.distribution().str(), from);
    node.grid = to;
    node.spec_path = path;
    node.inputs = {producer};
    if (producer != kModelInput) m->nodes_[static_cast<size_t>(producer)].consumers++;
    node.global_output = global_shape_of(producer);
    layers::LayerContext ctx;
    ctx.grid = to;
    ctx.seed = options.seed;
    Shape block = node.global_output;
    block[0] = m->batch_multiple_;
    node.first_parameter = m->params_.trainable_count();
    node.layer->setup({from.local_shape(block, path)}, ctx, m->params_);
    node.context = ctx;
    const int index = static_cast<int>(m->nodes_.size());
    m->nodes_.push_back(std::move(node));
    return moved[key] = index;
  };

  auto layer_specs = spec.object_list("layers");
  if (layer_specs.empty()) throw ConfigError(spec.path_of("layers"), "a model needs at least one layer");
  int previous = kModelInput;
  for (size_t i = 0; i < layer_specs.size(); ++i) {
    auto& ls = layer_specs[i];
    const std::string type = ls.string("type");
    const std::string name = ls.string("name", type + std::to_string(i));
    if (name == "input" || index_of.count(name))
      throw ConfigError(ls.path_of("name"), "layer name \"" + name + "\" is " +
                                                (name == "input" ? "reserved for the model input" : "used twice"));
    Node node;
    node.spec_path = ls.path();
    const auto input_names = ls.string_list("inputs", {i == 0 ? std::string("input") : std::string()});
    std::vector<int> producers;
    for (const auto& in : input_names) {
      if (in.empty()) {
        producers.push_back(previous);
      } else if (in == "input") {
        producers.push_back(kModelInput);
      } else {
        auto it = index_of.find(in);
        if (it == index_of.end())
          throw ConfigError(ls.path_of("inputs"), "\"" + in + "\" is not the name of an earlier layer or \"input\"");
        producers.push_back(it->second);
      }
    }
    layers::LayerContext ctx;
    ctx.ops = factory(ls.string("backend", default_backend),
                      ls.has("backend") ? ls.path_of("backend") : spec.path_of("backend"));
    ctx.seed = options.seed;
    ctx.overlap_halos = overlap_halos;
    ctx.grid = ls.has("distribution") ? grid_for(read_distribution(ls.object("distribution")), ls.path_of("distribution"))
                                      : m->input_grid_;
    node.grid = ctx.grid;
    node.context = ctx;
    node.layer = make_layer(type, name, ls);
    ls.finish();

    const int wanted = node.layer->num_inputs();
    const int got = static_cast<int>(producers.size());
    if ((wanted >= 0 && got != wanted) || (wanted < 0 && got < 2))
      throw ConfigError(ls.path_of("inputs"), "layer '" + name + "' (" + type + ") takes " +
                                                  (wanted < 0 ? std::string("two or more") : std::to_string(wanted)) +
                                                  " input(s), got " + std::to_string(got));
    if (ctx.grid.distribution().is_spatial() && !node.layer->supports_spatial_split())
      throw ConfigError(ls.has("distribution") ? ls.path_of("distribution") : spec.path_of("distribution"),
                        "layer '" + name + "' (" + type + ") cannot run with its samples split in space (distribution " +
                            ctx.grid.distribution().str() +
                            "); give it a distribution without depth/height/width splits, e.g. {\"sample\": " +
                            std::to_string(options.group.size()) + "}");
    for (int producer : producers) {
      const int in = redistributed(producer, ctx.grid, ls.path());
      node.inputs.push_back(in);
      if (in != kModelInput) m->nodes_[static_cast<size_t>(in)].consumers++;
    }
    std::vector<Shape> globals, locals;
    try {
      for (int in : node.inputs) globals.push_back(global_shape_of(in));
      node.global_output = node.layer->output_shape(globals);
      // Blocks of a small batch only to declare parameters; reshape_for() sets the real ones.
      for (auto g : globals) {
        g[0] = m->batch_multiple_;
        locals.push_back(ctx.grid.local_shape(g, "layer '" + name + "' (" + type + ")"));
      }
    } catch (const ShapeError& e) {
      throw ConfigError(ls.path(), e.what());
    }
    node.first_parameter = m->params_.trainable_count();
    node.layer->setup(locals, ctx, m->params_);
    index_of[name] = static_cast<int>(m->nodes_.size());
    previous = index_of[name];
    m->nodes_.push_back(std::move(node));
  }
  spec.finish();

  for (size_t i = 0; i + 1 < m->nodes_.size(); ++i)
    if (m->nodes_[i].consumers == 0)
      throw ConfigError(m->nodes_[i].spec_path, "the output of layer '" + m->nodes_[i].layer->name() +
                                                    "' is used by no later layer (only the last layer may be unused)");
  for (const auto& line : m->move_activations_after_max_pools()) log::info(line);
  if (fuse_conv_max_pool)
    for (const auto& line : m->fuse_convolutions_with_max_pools()) log::info(line);
  try {
    m->reshape_for(m->batch_multiple_);
  } catch (const ShapeError& e) {
    throw ConfigError(spec.path_of("layers"), e.what());
  }
  m->params_.finalize(options.seed, init_scheme);
  m->grad_written_.assign(m->nodes_.size(), 0);
  return m;
}

std::vector<std::string> Model::move_activations_after_max_pools() {
  // These activations are memory-bound passes; after a 2x2x2 pool they touch 8x fewer
  // elements (measured on cosmoflow-small: ~48 ms of a ~510 ms step for the first block).
  std::vector<std::string> moved;
  for (size_t i = 0; i + 1 < nodes_.size(); ++i) {
    Node& act = nodes_[i];
    Node& pool = nodes_[i + 1];
    const bool max_pool = pool.layer->type().rfind("max_pool", 0) == 0;
    if (!act.layer->commutes_with_max_pool() || !max_pool || act.consumers != 1 || act.inputs.size() != 1 ||
        pool.inputs.size() != 1 || pool.inputs[0] != static_cast<int>(i))
      continue;
    // Node i keeps the activation's input and now pools it; node i+1 keeps reading node i and
    // now applies the activation, so every later reference to the pool's output is unchanged.
    std::swap(act.layer, pool.layer);
    moved.push_back("graph: '" + pool.layer->name() + "' (" + pool.layer->type() + ") runs after '" +
                    act.layer->name() + "' (" + act.layer->type() + "): same result on fewer elements");
    ++i;
  }
  return moved;
}

std::vector<std::string> Model::fuse_convolutions_with_max_pools() {
  // Slabs of a few MB are too small to keep a GPU busy, and its memory is fast: host only.
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return {};
  std::vector<std::string> fused;
  for (size_t i = 0; i + 1 < nodes_.size(); ++i) {
    Node& conv_node = nodes_[i];
    const Node& pool_node = nodes_[i + 1];
    const auto* conv = dynamic_cast<const layers::Conv*>(conv_node.layer.get());
    const auto* pool = dynamic_cast<const layers::Pool*>(pool_node.layer.get());
    if (conv == nullptr || pool == nullptr || conv_node.inputs.size() != 1 || conv_node.consumers != 1 ||
        pool_node.inputs != std::vector<int>{static_cast<int>(i)} ||
        !(conv_node.grid.distribution() == pool_node.grid.distribution()) ||
        conv_node.grid.distribution().is_spatial() ||
        !layers::ConvMaxPool::can_fuse(pool->options(), conv->options().spatial_rank))
      continue;
    const int producer = conv_node.inputs[0];
    Shape input = producer == kModelInput ? global_input_shape(1) : nodes_[static_cast<size_t>(producer)].global_output;
    input[0] = 1;
    if (!layers::ConvMaxPool::pays_off(conv->geometry(input))) continue;
    const std::string pool_name = pool->name();
    const layers::PoolOptions pool_options = pool->options();
    std::unique_ptr<layers::Conv> owned(static_cast<layers::Conv*>(conv_node.layer.release()));
    auto layer = std::make_unique<layers::ConvMaxPool>(std::move(owned), pool_name, pool_options);
    const std::string where = "layer '" + layer->name() + "'";
    input[0] = batch_multiple_;
    layer->setup({conv_node.grid.local_shape(input, where)}, conv_node.context, params_);
    fused.push_back("graph: '" + layer->name() +
                    "' pools each slab of the convolution's output as it is computed "
                    "(its full output is never stored)");
    conv_node.layer = std::move(layer);
    conv_node.consumers = pool_node.consumers;
    conv_node.global_output = pool_node.global_output;
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    const int removed = static_cast<int>(i) + 1;
    for (size_t j = i + 1; j < nodes_.size(); ++j)
      for (int& in : nodes_[j].inputs)
        if (in >= removed) in = in == removed ? static_cast<int>(i) : in - 1;
  }
  return fused;
}

Shape Model::output_shape(int64_t batch) const {
  Shape s = nodes_.back().global_output;
  s[0] = batch;
  return s;
}

bool Model::has_spatial_split() const {
  for (const auto& node : nodes_)
    if (node.grid.distribution().is_spatial()) return true;
  return false;
}

Shape Model::global_input_shape(int64_t batch) const {
  std::vector<int64_t> dims{batch};
  for (auto d : sample_shape_.dims()) dims.push_back(d);
  return Shape(dims);
}

void Model::reshape_for(int64_t batch) {
  if (batch % batch_multiple_ != 0)
    throw ShapeError("a global batch of " + std::to_string(batch) + " samples does not split over the model's " +
                     "distributions; use a multiple of " + std::to_string(batch_multiple_));
  const Shape input_global = global_input_shape(batch);
  const Shape input_local = input_grid_.local_shape(input_global, "model input");
  for (auto& node : nodes_) {
    std::vector<Shape> globals;
    node.input_shapes.resize(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int in = node.inputs[k];
      globals.push_back(in == kModelInput ? input_global : nodes_[static_cast<size_t>(in)].global_output);
      node.input_shapes[k] = in == kModelInput ? input_local : nodes_[static_cast<size_t>(in)].output.shape();
    }
    const std::string where = "layer '" + node.layer->name() + "' (" + node.layer->type() + ")";
    node.global_output = node.layer->output_shape(globals);
    node.layer->reshape(node.input_shapes);
    ensure_shape(node.output, node.grid.local_shape(node.global_output, where), node.layer->name() + ".output");
  }
  current_batch_ = batch;
}

const Tensor& Model::forward(const Tensor& input, const layers::StepInfo& step) {
  const int64_t batch = input.shape().rank() > 0 ? input.shape()[0] * input_grid_.distribution().sample : 0;
  require_shape(step.batch == 0 || step.batch == batch,
                "model input of shape " + input.shape().str() + " is not this rank's share of a batch of " +
                    std::to_string(step.batch) + " samples");
  if (batch != current_batch_) reshape_for(batch);
  const Shape expected = input_grid_.local_shape(global_input_shape(batch), "model input");
  if (input.shape() != expected)
    throw ShapeError("model input has shape " + input.shape().str() + ", expected " + expected.str() +
                     " (this rank's block of [N] + " + sample_shape_.str() + ")");
  layers::StepInfo info = step;
  info.batch = batch;
  input_ = input;
  std::vector<Tensor> ins;
  for (auto& node : nodes_) {
    ProfileRegion region("forward/" + node.layer->name());
    ins.clear();
    for (int in : node.inputs) ins.push_back(in == kModelInput ? input : nodes_[static_cast<size_t>(in)].output);
    node.layer->forward(ins, node.output, info);
  }
  return nodes_.back().output;
}

void Model::backward(const Tensor& grad_output, const layers::StepInfo& step,
                     const std::function<void(int64_t)>& on_progress) {
  require_shape(grad_output.shape() == nodes_.back().output.shape(),
                "gradient of shape " + grad_output.shape().str() + " for a model output of shape " +
                    nodes_.back().output.shape().str());
  std::fill(grad_written_.begin(), grad_written_.end(), 0);
  layers::StepInfo info = step;
  info.batch = current_batch_;
  nodes_.back().grad = grad_output;
  grad_written_.back() = 1;
  std::vector<Tensor> ins, grads;
  std::vector<int> accumulate;
  for (size_t i = nodes_.size(); i-- > 0;) {
    Node& node = nodes_[i];
    ProfileRegion region("backward/" + node.layer->name());
    ins.clear();
    grads.clear();
    accumulate.clear();
    for (int in : node.inputs) {
      if (in == kModelInput) {
        ins.push_back(input_);
        grads.emplace_back();  // the data needs no gradient
        continue;
      }
      Node& src = nodes_[static_cast<size_t>(in)];
      ins.push_back(src.output);
      if (!grad_written_[static_cast<size_t>(in)]) {
        // First consumer (in backward order) writes the gradient directly; later ones write
        // into scratch and add, so single-consumer graphs pay for no extra pass.
        ensure_shape(src.grad, src.output.shape(), src.layer->name() + ".grad");
        grads.push_back(src.grad);
        grad_written_[static_cast<size_t>(in)] = 1;
      } else {
        ensure_shape(src.scratch, src.output.shape(), src.layer->name() + ".grad_scratch");
        grads.push_back(src.scratch);
        accumulate.push_back(in);
      }
    }
    node.layer->backward(ins, node.output, node.grad, grads, info);
    for (int in : accumulate) {
      Node& src = nodes_[static_cast<size_t>(in)];
      kokkos_backend::axpby(1.0f, src.scratch, 1.0f, src.grad);
    }
    if (on_progress) on_progress(node.first_parameter);
  }
}

std::string Model::summary() const {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-18s %-18s %-24s %12s  %s\n", "layer", "type", "output (N,D,H,W,C)", "parameters",
                "backend");
  out += line;
  for (const auto& node : nodes_) {
    int64_t count = 0;
    for (const auto& p : params_.all())
      if (p->trainable && p->name.rfind(node.layer->name() + ".", 0) == 0) count += p->shape.numel();
    std::snprintf(line, sizeof line, "%-18s %-18s %-24s %12lld  %s\n", node.layer->name().c_str(),
                  node.layer->type().c_str(), node.global_output.str().c_str(), static_cast<long long>(count),
                  (node.layer->backend() + (node.grid.distribution().is_serial() ? "" : "  " + node.grid.distribution().str())).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "total trainable parameters: %lld\n",
                static_cast<long long>(params_.trainable_count()));
  return out + line;
}

double Model::forward_flops_per_sample() const {
  double flops = 0.0;
  for (const auto& node : nodes_) {
    std::vector<Shape> shapes;
    for (int in : node.inputs) {
      Shape s = in == kModelInput ? global_input_shape(1) : nodes_[static_cast<size_t>(in)].global_output;
      s[0] = 1;
      shapes.push_back(s);
    }
    flops += node.layer->forward_flops(shapes);
  }
  return flops;
}

}  // namespace tessera::model
