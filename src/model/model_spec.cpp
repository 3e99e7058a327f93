#include "tessera/model/model_spec.hpp"

#include <map>

#include "tessera/core/error.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/ops/size_limits.hpp"

namespace tessera::model {
namespace {

using ops::kMaxExtent;  // the largest channel count and spatial size of a model input

Shape read_sample_shape(ConfigObject input) {
  const int64_t channels = input.integer_in("channels", 1, kMaxExtent, 1);
  Shape shape{channels};
  if (input.has("size")) {
    const auto size = input.integer_list("size");
    if (size.size() != 2 && size.size() != 3)
      throw ConfigError(input.path_of("size"),
                        "expected 2 (H, W) or 3 (D, H, W) sizes, got " + std::to_string(size.size()));
    // Bounded like "channels": shapes computed from larger sizes would overflow int64.
    for (auto s : size)
      if (s < 1 || s > kMaxExtent)
        throw ConfigError(input.path_of("size"),
                          "sizes must be between 1 and " + std::to_string(kMaxExtent) + ", got " + std::to_string(s));
    std::vector<int64_t> dims(size);
    dims.push_back(channels);
    shape = Shape(dims);
  }
  input.finish();
  return shape;
}

/// Entry `i` of "layers"; `index_of` holds the names of the entries before it.
LayerSpec read_layer(ConfigObject& ls, size_t i, const std::map<std::string, int>& index_of) {
  LayerSpec l;
  l.path = ls.path();
  l.config = ls.raw();
  l.type = ls.string("type");
  l.name = ls.string("name", l.type + std::to_string(i));
  if (l.name == "input" || index_of.count(l.name))
    throw ConfigError(ls.path_of("name"), "layer name \"" + l.name + "\" is " +
                                              (l.name == "input" ? "reserved for the model input" : "used twice"));
  for (const auto& in : ls.string_list("inputs", {i == 0 ? std::string("input") : std::string()})) {
    if (in.empty()) {
      l.inputs.push_back(static_cast<int>(i) - 1);  // the previous layer
    } else if (in == "input") {
      l.inputs.push_back(LayerSpec::kModelInput);
    } else {
      auto it = index_of.find(in);
      if (it == index_of.end())
        throw ConfigError(ls.path_of("inputs"), "\"" + in + "\" is not the name of an earlier layer or \"input\"");
      l.inputs.push_back(it->second);
    }
  }
  if (ls.has("backend")) l.backend = ls.string("backend");
  l.backend_path = ls.path_of("backend");
  if (ls.has("distribution")) l.distribution = read_distribution(ls.object("distribution"));
  l.distribution_path = ls.path_of("distribution");
  if (ls.has("precision")) l.precision = read_precision(ls, "precision");
  l.precision_path = ls.path_of("precision");
  make_layer(l.type, l.name, ls);  // reads and checks the layer's own keys
  ls.finish();
  return l;
}

}  // namespace

ElementType parse_precision(const std::string& name, const std::string& where) {
  if (name == "tf32")
    throw ConfigError(where,
                      "tf32 is a math mode of a whole run on NVIDIA GPUs (fp32 data, TF32 tensor-core "
                      "products in cuDNN's convolutions): set it as training.precision or --precision, not "
                      "per layer");
  const auto type = parse_element_type(name);
  if (!type) throw ConfigError(where, "precision \"" + name + "\" is not one of " + element_type_names());
  return *type;
}

RunPrecision parse_run_precision(const std::string& name, const std::string& where) {
  if (name == "tf32") return {ElementType::fp32, true};
  const auto type = parse_element_type(name);
  if (!type) throw ConfigError(where, "precision \"" + name + "\" is not one of " + element_type_names() + ", tf32");
  return {*type, false};
}

ElementType read_precision(ConfigObject& cfg, const std::string& key) {
  return parse_precision(cfg.string(key), cfg.path_of(key));
}

parallel::Distribution read_distribution(ConfigObject cfg) {
  parallel::Distribution d;
  d.sample = static_cast<int>(cfg.integer_in("sample", 1, 1 << 20, 1));
  d.channel = static_cast<int>(cfg.integer_in("channel", 1, 1 << 20, 1));
  d.filter = static_cast<int>(cfg.integer_in("filter", 1, 1 << 20, 1));
  d.depth = static_cast<int>(cfg.integer_in("depth", 1, 1 << 20, 1));
  d.height = static_cast<int>(cfg.integer_in("height", 1, 1 << 20, 1));
  d.width = static_cast<int>(cfg.integer_in("width", 1, 1 << 20, 1));
  d.shard_weights = cfg.choice("weights", {"replicated", "sharded"}, "replicated") == "sharded";
  if (cfg.has("cube")) {
    // Bian et al.'s 3-D split: a q × q × q cube of samples, input channels and filters.
    const int q = static_cast<int>(cfg.integer_in("cube", 1, 1 << 10));
    for (const auto& [key, parts] :
         {std::pair<const char*, int>{"sample", d.sample}, {"channel", d.channel}, {"filter", d.filter}})
      if (cfg.has(key) && parts != q)
        throw ConfigError(cfg.path_of(key), "\"cube\": " + std::to_string(q) +
                                                " splits samples, channels and filters " + std::to_string(q) +
                                                " ways each (" + std::to_string(q * q * q) + " ranks), but \"" + key +
                                                "\" asks for " + std::to_string(parts) +
                                                ": a cube has equal sides; write the three counts without \"cube\" "
                                                "for a grid that is not a cube");
    if (cfg.has("weights") && !d.shard_weights)
      throw ConfigError(cfg.path_of("weights"),
                        "\"cube\" shards the weights over the samples; it cannot keep them "
                        "\"replicated\"");
    d.sample = d.channel = d.filter = q;
    d.shard_weights = true;
  }
  cfg.finish();
  return d;
}

ModelSpec ModelSpec::from_json(ConfigObject& spec) {
  ModelSpec m;
  m.path = spec.path();
  m.sample_shape = read_sample_shape(spec.object("input"));
  if (spec.has("backend")) m.backend = spec.string("backend");
  m.backend_path = spec.path_of("backend");
  if (spec.has("halo_overlap") && spec.raw().at("halo_overlap").is_string()) {
    if (spec.string("halo_overlap") != "always")
      throw ConfigError(spec.path_of("halo_overlap"), "expected true, false or \"always\", got \"" +
                                                          spec.raw().at("halo_overlap").get<std::string>() + "\"");
    m.halo_overlap = layers::HaloOverlap::always;
  } else {
    m.halo_overlap = spec.boolean("halo_overlap", true) ? layers::HaloOverlap::where_it_pays : layers::HaloOverlap::off;
  }
  m.fuse_conv_max_pool = spec.boolean("fuse_conv_max_pool", true);
  m.fuse_batch_norm_activation = spec.boolean("fuse_batch_norm_activation", true);
  m.init = spec.choice("init", {"he_normal", "uniform_fan_in"}, "he_normal") == "he_normal"
               ? layers::InitScheme::he_normal
               : layers::InitScheme::uniform_fan_in;
  m.distribution_path = spec.path_of("distribution");
  if (spec.has("distribution") && spec.raw().at("distribution").is_string()) {
    if (spec.string("distribution") != "auto")
      throw ConfigError(m.distribution_path, "expected an object such as {\"sample\": 2} or \"auto\", got \"" +
                                                 spec.raw().at("distribution").get<std::string>() + "\"");
    m.distribution_auto = true;
  } else if (spec.has("distribution")) {
    m.distribution = read_distribution(spec.object("distribution"));
  }

  m.layers_path = spec.path_of("layers");
  auto layer_specs = spec.object_list("layers");
  if (layer_specs.empty()) throw ConfigError(m.layers_path, "a model needs at least one layer");
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < layer_specs.size(); ++i) {
    m.layers.push_back(read_layer(layer_specs[i], i, index_of));
    index_of[m.layers.back().name] = static_cast<int>(i);
  }
  spec.finish();
  if (m.distribution_auto)
    for (const auto& l : m.layers)
      if (l.distribution)
        throw ConfigError(l.distribution_path,
                          "the model's distribution is \"auto\": the planner chooses every "
                          "layer's, so layer '" +
                              l.name + "' may not name its own");
  return m;
}

}  // namespace tessera::model
