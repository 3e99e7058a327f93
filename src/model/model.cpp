#include "tessera/model/model.hpp"

#include <cstdio>
#include <map>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/ops/elementwise.hpp"

namespace tessera::model {
namespace {

dist::Distribution read_distribution(ConfigObject cfg) {
  dist::Distribution d;
  d.sample = static_cast<int>(cfg.integer_in("sample", 1, 1 << 20, 1));
  d.channel = static_cast<int>(cfg.integer_in("channel", 1, 1 << 20, 1));
  d.depth = static_cast<int>(cfg.integer_in("depth", 1, 1 << 20, 1));
  d.height = static_cast<int>(cfg.integer_in("height", 1, 1 << 20, 1));
  d.width = static_cast<int>(cfg.integer_in("width", 1, 1 << 20, 1));
  cfg.finish();
  return d;
}

void check_distribution(const dist::Distribution& d, const BuildOptions& options, const std::string& path) {
  if (d.channel != 1 || d.is_spatial())
    throw ConfigError(path, "distribution " + d.str() +
                                " splits channels or space; this version of Tessera parallelises over samples only");
  if (d.ranks() != options.ranks)
    throw ConfigError(path, "distribution " + d.str() + " uses " + std::to_string(d.ranks()) +
                                " ranks, but this run has " + std::to_string(options.ranks) + " (mpirun -np " +
                                std::to_string(d.ranks()) + ")");
}

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
  const auto init_scheme = spec.choice("init", {"he_normal", "uniform_fan_in"}, "he_normal") == "he_normal"
                               ? layers::InitScheme::he_normal
                               : layers::InitScheme::uniform_fan_in;
  dist::Distribution default_distribution;
  default_distribution.sample = options.ranks;  // data parallelism unless the spec says otherwise
  if (spec.has("distribution")) default_distribution = read_distribution(spec.object("distribution"));
  check_distribution(default_distribution, options, spec.path_of("distribution"));

  std::map<std::string, int> index_of;
  std::map<std::string, ops::OpFactory*> factory_of;
  auto factory = [&](const std::string& backend, const std::string& path) {
    auto it = factory_of.find(backend);
    if (it != factory_of.end()) return it->second;
    try {
      m->factories_.push_back(std::make_unique<ops::OpFactory>(backend));
    } catch (const Error& e) {
      throw ConfigError(path, e.what());
    }
    return factory_of[backend] = m->factories_.back().get();
  };

  auto layer_specs = spec.object_list("layers");
  if (layer_specs.empty()) throw ConfigError(spec.path_of("layers"), "a model needs at least one layer");
  for (size_t i = 0; i < layer_specs.size(); ++i) {
    auto& ls = layer_specs[i];
    const std::string type = ls.string("type");
    const std::string name = ls.string("name", type + std::to_string(i));
    if (name == "input" || index_of.count(name))
      throw ConfigError(ls.path_of("name"), "layer name \"" + name + "\" is " +
                                                (name == "input" ? "reserved for the model input" : "used twice"));
    Node node;
    const auto input_names = ls.string_list("inputs", {i == 0 ? std::string("input") : std::string()});
    for (const auto& in : input_names) {
      if (in.empty()) {
        node.inputs.push_back(static_cast<int>(i) - 1);
      } else if (in == "input") {
        node.inputs.push_back(kModelInput);
      } else {
        auto it = index_of.find(in);
        if (it == index_of.end())
          throw ConfigError(ls.path_of("inputs"), "\"" + in + "\" is not the name of an earlier layer or \"input\"");
        node.inputs.push_back(it->second);
      }
    }
    layers::LayerContext ctx;
    ctx.ops = factory(ls.string("backend", default_backend),
                      ls.has("backend") ? ls.path_of("backend") : spec.path_of("backend"));
    ctx.seed = options.seed;
    ctx.samples = options.samples;
    ctx.distribution = default_distribution;
    if (ls.has("distribution")) {
      ctx.distribution = read_distribution(ls.object("distribution"));
      check_distribution(ctx.distribution, options, ls.path_of("distribution"));
    }
    node.layer = make_layer(type, name, ls);
    ls.finish();

    const int wanted = node.layer->num_inputs();
    const int got = static_cast<int>(node.inputs.size());
    if ((wanted >= 0 && got != wanted) || (wanted < 0 && got < 2))
      throw ConfigError(ls.path_of("inputs"), "layer '" + name + "' (" + type + ") takes " +
                                                  (wanted < 0 ? std::string("two or more") : std::to_string(wanted)) +
                                                  " input(s), got " + std::to_string(got));
    for (int in : node.inputs) {
      if (in != kModelInput) m->nodes_[static_cast<size_t>(in)].consumers++;
      node.input_shapes.push_back(in == kModelInput ? Shape() : m->nodes_[static_cast<size_t>(in)].output.shape());
    }
    // Shapes are checked with a batch of 1 here; the batch dimension is free.
    std::vector<int64_t> batch1{1};
    for (auto d : m->sample_shape_.dims()) batch1.push_back(d);
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] == kModelInput) node.input_shapes[k] = Shape(batch1);
    Shape out;
    try {
      out = node.layer->output_shape(node.input_shapes);
    } catch (const ShapeError& e) {
      throw ConfigError(ls.path(), e.what());
    }
    node.first_parameter = m->params_.trainable_count();
    node.layer->setup(node.input_shapes, ctx, m->params_);
    node.output = Tensor(out, name + ".output");
    index_of[name] = static_cast<int>(i);
    m->nodes_.push_back(std::move(node));
  }
  spec.finish();

  for (size_t i = 0; i + 1 < m->nodes_.size(); ++i)
    if (m->nodes_[i].consumers == 0)
      throw ConfigError(layer_specs[i].path(), "the output of layer '" + m->nodes_[i].layer->name() +
                                                   "' is used by no later layer (only the last layer may be unused)");
  std::vector<int64_t> batch1{1};
  for (auto d : m->sample_shape_.dims()) batch1.push_back(d);
  for (const auto& line : m->move_activations_after_max_pools()) log::info(line);
  m->reshape_for(Shape(batch1));
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

Shape Model::output_shape(int64_t batch) const {
  Shape s = nodes_.back().output.shape();
  s[0] = batch;
  return s;
}

void Model::reshape_for(const Shape& input_shape) {
  for (auto& node : nodes_) {
    for (size_t k = 0; k < node.inputs.size(); ++k)
      node.input_shapes[k] =
          node.inputs[k] == kModelInput ? input_shape : nodes_[static_cast<size_t>(node.inputs[k])].output.shape();
    const Shape out = node.layer->output_shape(node.input_shapes);
    node.layer->reshape(node.input_shapes);
    ensure_shape(node.output, out, node.layer->name() + ".output");
  }
  current_input_shape_ = input_shape;
}

const Tensor& Model::forward(const Tensor& input, const layers::StepInfo& step) {
  Shape expected = input.shape();
  for (int d = 1; d < expected.rank(); ++d) expected[d] = d - 1 < sample_shape_.rank() ? sample_shape_[d - 1] : -1;
  if (input.shape().rank() != sample_shape_.rank() + 1 || expected != input.shape())
    throw ShapeError("model input has shape " + input.shape().str() + ", expected [N] + " + sample_shape_.str());
  if (input.shape() != current_input_shape_) reshape_for(input.shape());
  input_ = input;
  std::vector<Tensor> ins;
  for (auto& node : nodes_) {
    ProfileRegion region("forward/" + node.layer->name());
    ins.clear();
    for (int in : node.inputs) ins.push_back(in == kModelInput ? input : nodes_[static_cast<size_t>(in)].output);
    node.layer->forward(ins, node.output, step);
  }
  return nodes_.back().output;
}

void Model::backward(const Tensor& grad_output, const layers::StepInfo& step,
                     const std::function<void(int64_t)>& on_progress) {
  require_shape(grad_output.shape() == nodes_.back().output.shape(),
                "gradient of shape " + grad_output.shape().str() + " for a model output of shape " +
                    nodes_.back().output.shape().str());
  std::fill(grad_written_.begin(), grad_written_.end(), 0);
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
    node.layer->backward(ins, node.output, node.grad, grads, step);
    for (int in : accumulate) {
      Node& src = nodes_[static_cast<size_t>(in)];
      ops::axpby(1.0f, src.scratch, 1.0f, src.grad);
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
                  node.layer->type().c_str(), node.output.shape().str().c_str(), static_cast<long long>(count),
                  node.layer->backend().c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "total trainable parameters: %lld\n",
                static_cast<long long>(params_.trainable_count()));
  return out + line;
}

double Model::forward_flops_per_sample() const {
  double flops = 0.0;
  for (const auto& node : nodes_) {
    auto shapes = node.input_shapes;
    for (auto& s : shapes) s[0] = 1;
    flops += node.layer->forward_flops(shapes);
  }
  return flops;
}

}  // namespace tessera::model
