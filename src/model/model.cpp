#include "tessera/model/model.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <tuple>

#include "tessera/backends/kokkos/arithmetic_kernels.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/model/model_spec.hpp"
#include "tessera/model/passes/passes.hpp"

namespace tessera::model {

std::unique_ptr<Model> Model::from_json(ConfigObject& spec, const BuildOptions& options) {
  Graph graph = build_graph(ModelSpec::from_json(spec), options);
  passes::run_all(graph);
  return std::make_unique<Model>(std::move(graph));
}

Model::Model(Graph graph) : graph_(std::move(graph)), state_(graph_.nodes.size()) {
  set_up_layers();
  try {
    reshape_for(graph_.min_batch);
  } catch (const ShapeError& e) {
    throw ConfigError(graph_.layers_path, e.what());
  }
  params_.finalize(graph_.seed, graph_.init);
  grad_written_.assign(graph_.nodes.size(), 0);
  say_declined_ops();
}

void Model::say_declined_ops() const {
  std::vector<registry::OpChoice> choices;
  for (const auto& node : graph_.nodes)
    if (node.context.ops != nullptr)
      for (auto& c : node.context.ops->choices_for(node.layer->name())) choices.push_back(std::move(c));
  // Once per process: a population or a search builds many models of the same layers.
  static std::mutex m;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(m);
  for (const auto& note : registry::declined_notes(choices))
    if (said.insert(note).second) log::info(note);
}

void Model::set_up_layers() {
  // Parameters are laid out in graph order, which backward's progress reports rely on.
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    GraphNode& node = graph_.nodes[i];
    std::vector<Shape> locals;
    try {
      locals = graph_.local_inputs(i, graph_.min_batch);
    } catch (const ShapeError& e) {
      throw ConfigError(node.spec_path, e.what());
    }
    state_[i].first_parameter = params_.trainable_count();
    node.layer->set_global_inputs(graph_.global_inputs(i, graph_.min_batch));
    node.layer->setup(locals, node.context, params_);
  }
  graph_.declared.reset();  // the layers now point into params_
}

Shape Model::output_shape(int64_t batch) const {
  Shape s = graph_.nodes.back().global_output;
  s[0] = batch;
  return s;
}

bool Model::splits(int64_t batch) const {
  try {
    graph_.check_batch(batch);
  } catch (const ShapeError&) {
    return false;
  }
  return true;
}

bool Model::has_spatial_split() const {
  for (const auto& node : graph_.nodes)
    if (node.grid().distribution().is_spatial()) return true;
  return false;
}

void Model::reshape_for(int64_t batch) {
  graph_.check_batch(batch);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    GraphNode& node = graph_.nodes[i];
    NodeState& state = state_[i];
    const std::vector<Shape> globals = graph_.global_inputs(i, batch);
    state.input_shapes = graph_.local_inputs(i, batch);  // each input as its producer holds it
    const std::string where = "layer '" + node.layer->name() + "' (" + node.layer->type() + ")";
    state.global_output = node.layer->output_shape(globals);
    node.layer->set_global_inputs(globals);
    node.layer->reshape(state.input_shapes);
    ensure_shape(state.output, node.grid().local_shape(state.global_output, where), node.layer->name() + ".output",
                 node.context.precision);
    state.converted_input.resize(node.inputs.size());
    state.converted_grad.resize(node.inputs.size());
  }
  current_batch_ = batch;
  current_shares_ = graph_.shares->version();
}

const Tensor& Model::forward(const Tensor& input, const layers::StepInfo& step) {
  int64_t batch = step.batch;
  if (batch == 0 && input.shape().rank() > 0) {
    batch = input.shape()[0];
    input_grid().samples().allreduce_sum(&batch, 1);
  }
  if (batch != current_batch_ || graph_.shares->version() != current_shares_) reshape_for(batch);
  const Shape expected = input_grid().local_shape(graph_.input_shape(batch), "model input");
  if (input.shape() != expected)
    throw ShapeError("model input has shape " + input.shape().str() + ", expected " + expected.str() +
                     " (this rank's block of [N] + " + sample_shape().str() + ")");
  layers::StepInfo info = step;
  info.batch = batch;
  input_ = input;
  std::vector<Tensor> ins;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    GraphNode& node = graph_.nodes[i];
    ProfileRegion region("forward/" + node.layer->name());
    ins.clear();
    for (size_t k = 0; k < node.inputs.size(); ++k) ins.push_back(layer_input(i, k, true));
    node.layer->forward(ins, state_[i].output, info);
  }
  const Tensor& out = state_.back().output;
  if (out.type() == ElementType::fp32) return out;
  ensure_shape(output_fp32_, out.shape(), "model.output_fp32");
  deep_copy(output_fp32_, out);
  return output_fp32_;
}

ElementType Model::type_of(int producer) const {
  return producer == Graph::kModelInput ? ElementType::fp32 : state_[static_cast<size_t>(producer)].output.type();
}

const Tensor& Model::layer_input(size_t i, size_t k, bool convert) {
  const int in = graph_.nodes[i].inputs[k];
  const Tensor& source = in == Graph::kModelInput ? input_ : state_[static_cast<size_t>(in)].output;
  const ElementType type = graph_.nodes[i].context.precision;
  if (source.type() == type) return source;
  Tensor& converted = state_[i].converted_input[k];
  if (convert) {
    ensure_shape(converted, source.shape(), graph_.nodes[i].layer->name() + ".input_converted", type);
    deep_copy(converted, source);
  }
  return converted;
}

void Model::backward(const Tensor& grad_output, const layers::StepInfo& step,
                     const std::function<void(int64_t)>& on_progress) {
  require_shape(grad_output.shape() == state_.back().output.shape(), "gradient of shape " + grad_output.shape().str() +
                                                                         " for a model output of shape " +
                                                                         state_.back().output.shape().str());
  std::fill(grad_written_.begin(), grad_written_.end(), 0);
  layers::StepInfo info = step;
  info.batch = current_batch_;
  if (state_.back().output.type() == ElementType::fp32) {
    state_.back().grad = grad_output;
  } else {
    ensure_shape(grad_output_converted_, grad_output.shape(), "model.grad_output_converted",
                 state_.back().output.type());
    deep_copy(grad_output_converted_, grad_output);
    state_.back().grad = grad_output_converted_;
  }
  grad_written_.back() = 1;
  std::vector<Tensor> ins, grads;
  std::vector<int> accumulate;
  for (size_t i = graph_.nodes.size(); i-- > 0;) {
    GraphNode& node = graph_.nodes[i];
    ProfileRegion region("backward/" + node.layer->name());
    ins.clear();
    grads.clear();
    accumulate.clear();
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ins.push_back(layer_input(i, k, false));  // converted by forward, where it needed to be
      grads.push_back(gradient_target(i, k, accumulate));
    }
    node.layer->backward(ins, state_[i].output, state_[i].grad, grads, info);
    for (int in : accumulate) {
      NodeState& src = state_[static_cast<size_t>(in)];
      kokkos_backend::accumulate(src.scratch, src.grad);
    }
    for (size_t k = 0; k < node.inputs.size(); ++k) take_converted_grad(i, k);
    if (on_progress) on_progress(state_[i].first_parameter);
  }
}

Tensor Model::gradient_target(size_t i, size_t k, std::vector<int>& accumulate) {
  const int in = graph_.nodes[i].inputs[k];
  if (in == Graph::kModelInput) return Tensor();  // the data needs no gradient
  NodeState& src = state_[static_cast<size_t>(in)];
  const std::string& src_name = graph_.nodes[static_cast<size_t>(in)].layer->name();
  const ElementType type = graph_.nodes[i].context.precision;
  if (src.output.type() != type) {
    // The layer writes the gradient in its own type; take_converted_grad converts it into
    // the producer's (or adds it there).
    Tensor& converted = state_[i].converted_grad[k];
    ensure_shape(converted, src.output.shape(), graph_.nodes[i].layer->name() + ".grad_converted", type);
    return converted;
  }
  if (!grad_written_[static_cast<size_t>(in)]) {
    // First consumer (in backward order) writes the gradient directly; later ones write
    // into scratch and add, so single-consumer graphs pay for no extra pass.
    ensure_shape(src.grad, src.output.shape(), src_name + ".grad", type);
    grad_written_[static_cast<size_t>(in)] = 1;
    return src.grad;
  }
  ensure_shape(src.scratch, src.output.shape(), src_name + ".grad_scratch", type);
  accumulate.push_back(in);
  return src.scratch;
}

void Model::take_converted_grad(size_t i, size_t k) {
  const int in = graph_.nodes[i].inputs[k];
  if (in == Graph::kModelInput || type_of(in) == graph_.nodes[i].context.precision) return;
  NodeState& src = state_[static_cast<size_t>(in)];
  const Tensor& converted = state_[i].converted_grad[k];
  if (!grad_written_[static_cast<size_t>(in)]) {
    ensure_shape(src.grad, src.output.shape(), graph_.nodes[static_cast<size_t>(in)].layer->name() + ".grad",
                 src.output.type());
    deep_copy(src.grad, converted);
    grad_written_[static_cast<size_t>(in)] = 1;
  } else {
    kokkos_backend::accumulate(converted, src.grad);
  }
}

int64_t Model::activation_bytes() const {
  int64_t bytes = 0;
  const auto add = [&bytes](const Tensor& t) { bytes += t.empty() ? 0 : t.bytes(); };
  for (const NodeState& s : state_) {
    add(s.output);
    if (s.grad.raw_data() != s.output.raw_data()) add(s.grad);
    add(s.scratch);
    for (const Tensor& t : s.converted_input) add(t);
    for (const Tensor& t : s.converted_grad) add(t);
  }
  add(output_fp32_);
  add(grad_output_converted_);
  return bytes;
}

std::string Model::precision_summary() const {
  size_t reduced = 0;
  ElementType type = ElementType::fp32;
  for (const auto& node : graph_.nodes)
    if (node.context.precision != ElementType::fp32) {
      ++reduced;
      type = node.context.precision;
    }
  if (reduced == 0) return "fp32";
  return std::string(element_type_name(type)) + " (" + std::to_string(reduced) + " of " +
         std::to_string(graph_.nodes.size()) + " layers; the others fp32)";
}

std::vector<Model::InputDomain> Model::input_domains() const {
  std::vector<InputDomain> domains;
  for (const auto& node : graph_.nodes) {
    const bool reads_input =
        std::find(node.inputs.begin(), node.inputs.end(), Graph::kModelInput) != node.inputs.end();
    if (const auto domain = node.layer->input_domain(); reads_input && domain)
      domains.push_back({node.spec_path, node.layer->name(), node.layer->type(), *domain});
  }
  return domains;
}

std::vector<Model::LayerRow> Model::layer_rows() const {
  std::vector<LayerRow> rows;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const GraphNode& node = graph_.nodes[i];
    const layers::Layer& layer = *node.layer;
    int64_t count = 0;
    for (const auto& p : params_.all())
      if (p->trainable && p->name.rfind(layer.name() + ".", 0) == 0) count += p->shape.numel();
    const parallel::Distribution& d = node.grid().distribution();
    rows.push_back({layer.name(), layer.type(), state_[i].global_output, count, layer.backend(),
                    element_type_name(node.context.precision), d.is_serial() ? "" : d.str()});
  }
  return rows;
}

std::string Model::uneven_split_notes() const {
  static const char* const names[3] = {"depth", "height", "width"};
  std::set<std::tuple<size_t, int64_t, int>> seen;
  std::string notes;
  for (const GraphNode& n : graph_.nodes) {
    if (n.global_output.rank() < 4 || !n.grid().distribution().is_spatial()) continue;
    const auto parts = n.grid().spatial_parts();
    const auto whole = parallel::spatial_size_of(n.global_output);
    for (size_t k = 0; k < 3; ++k) {
      if (parts[k] == 1 || !seen.insert({k, whole[k], parts[k]}).second) continue;
      std::string blocks;
      bool even = true;
      for (int i = 0; i < parts[k]; ++i) {
        std::array<int, 3> at{0, 0, 0};
        at[k] = i;
        const int64_t planes = n.grid().box_at(at, whole, n.layer->name()).extent[k];
        even = even && planes * parts[k] == whole[k];
        blocks += (i ? ", " : "") + std::to_string(planes);
      }
      if (even) continue;
      const int64_t unit = n.grid().alignment()->of(k, whole[k]);
      notes += format(
          "%s %lld over %d ranks: blocks of %s planes%s\n", names[k], static_cast<long long>(whole[k]), parts[k],
          blocks.c_str(),
          unit == 1 ? "" : format(" (units of %lld, for the strided layers)", static_cast<long long>(unit)).c_str());
    }
  }
  return notes;
}

std::string Model::summary() const {
  std::string out =
      format("%-18s %-18s %-24s %12s  %s\n", "layer", "type", "output (N,D,H,W,C)", "parameters", "backend");
  std::string declined;  // the op choices for which a backend declined, with its reason
  std::string notes;     // what split layers decided (e.g. halo overlap)
  const auto rows = layer_rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    const LayerRow& r = rows[i];
    const std::string backend = r.backend + (r.precision == "fp32" ? "" : " " + r.precision) +
                                (r.distribution.empty() ? "" : "  " + r.distribution);
    out += format("%-18s %-18s %-24s %12lld  %s\n", r.name.c_str(), r.type.c_str(), r.output.str().c_str(),
                  static_cast<long long>(r.parameters), backend.c_str());
    const layers::Layer& layer = *graph_.nodes[i].layer;
    if (const std::string note = layer.distribution_note(); !note.empty()) notes += layer.name() + ": " + note + "\n";
    const auto& ops = graph_.nodes[i].context.ops;
    if (ops == nullptr) continue;
    for (const auto& choice : ops->choices_for(layer.name()))
      if (!choice.declined.empty()) declined += layer.name() + ": " + choice.op + ": " + choice.str() + "\n";
  }
  return out + format("total trainable parameters: %lld\n", static_cast<long long>(params_.trainable_count())) +
         uneven_split_notes() + notes + declined;
}

double Model::forward_flops_per_sample() const {
  double flops = 0.0;
  for (size_t i = 0; i < graph_.nodes.size(); ++i)
    flops += graph_.nodes[i].layer->forward_flops(graph_.global_inputs(i, 1));
  return flops;
}

}  // namespace tessera::model
