#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/ops/activations.hpp"
#include "tessera/parallel/distribution.hpp"

/// The layers of a model spec as C++ values, for ModelBuilder: one function per layer type,
/// named as the type ("conv3d", "max_pool3d", ...), whose setters are the type's keys
/// (docs/config.md). An entry holds exactly the keys its JSON entry would hold, and the layer
/// reads and checks them as it reads a config, so the two ways of writing a model cannot
/// drift apart; keys left unset take the layer's own defaults.
namespace tessera::model::spec {

/// One integer for every spatial axis, or one per axis ([D, H, W] in 3D, [H, W] in 2D).
class PerAxis {
 public:
  PerAxis(int64_t all) : value_(all) {}  // NOLINT(google-explicit-constructor): kernel(3)
  PerAxis(std::initializer_list<int64_t> axes) : value_(std::vector<int64_t>(axes)) {}
  const nlohmann::json& json() const { return value_; }

 private:
  nlohmann::json value_;
};

/// A "distribution" object as a config writes it (model::read_distribution reads it): the axes
/// split over more than one rank, or {"sample": 1} for one rank.
inline nlohmann::json distribution_json(const parallel::Distribution& d) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, parts] : {std::pair<const char*, int>{"sample", d.sample},
                                   {"channel", d.channel},
                                   {"filter", d.filter},
                                   {"depth", d.depth},
                                   {"height", d.height},
                                   {"width", d.width}})
    if (parts > 1) j[key] = parts;
  if (j.empty()) j["sample"] = 1;
  if (d.shard_weights) j["weights"] = "sharded";
  return j;
}

/// A layer type and the keys of its "layers" entry; the base of every typed entry below.
class LayerEntry {
 public:
  explicit LayerEntry(std::string type) : type_(std::move(type)), keys_(nlohmann::json::object()) {}
  const std::string& type() const { return type_; }
  /// The keys set so far (not "type" or "name").
  const nlohmann::json& keys() const { return keys_; }

 protected:
  void put(const std::string& key, nlohmann::json value) { keys_[key] = std::move(value); }

 private:
  std::string type_;
  nlohmann::json keys_;
};

/// The keys every layer takes, returning the typed entry so that calls chain.
template <class Self>
class Entry : public LayerEntry {
 public:
  using LayerEntry::LayerEntry;
  /// Reads these earlier layers ("input": the model input) instead of the previous one.
  Self& inputs(const std::vector<std::string>& names) {
    put("inputs", names);
    return self();
  }
  /// The op backend of this layer only ("kokkos", "onednn", "cudnn", "auto").
  Self& backend(const std::string& name) {
    put("backend", name);
    return self();
  }
  /// How this layer's activations are split over the ranks (unset: the model's).
  Self& distribution(const parallel::Distribution& d) {
    put("distribution", distribution_json(d));
    return self();
  }

 protected:
  Self& self() { return static_cast<Self&>(*this); }
  Self& set_key(const std::string& key, nlohmann::json value) {
    put(key, std::move(value));
    return self();
  }
};

/// conv2d / conv3d.
class Conv final : public Entry<Conv> {
 public:
  Conv(std::string type, int64_t filters) : Entry(std::move(type)) { put("filters", filters); }
  Conv& kernel(const PerAxis& k) { return set_key("kernel", k.json()); }
  Conv& stride(const PerAxis& s) { return set_key("stride", s.json()); }
  Conv& padding(const PerAxis& p) { return set_key("padding", p.json()); }
  Conv& dilation(const PerAxis& d) { return set_key("dilation", d.json()); }
  Conv& bias(bool on) { return set_key("bias", on); }
};

/// conv_transpose2d / conv_transpose3d.
class ConvTranspose final : public Entry<ConvTranspose> {
 public:
  ConvTranspose(std::string type, int64_t filters) : Entry(std::move(type)) { put("filters", filters); }
  ConvTranspose& kernel(const PerAxis& k) { return set_key("kernel", k.json()); }
  ConvTranspose& stride(const PerAxis& s) { return set_key("stride", s.json()); }
  ConvTranspose& padding(const PerAxis& p) { return set_key("padding", p.json()); }
  ConvTranspose& output_padding(const PerAxis& p) { return set_key("output_padding", p.json()); }
  ConvTranspose& bias(bool on) { return set_key("bias", on); }
};

/// max_pool2d / max_pool3d / avg_pool2d / avg_pool3d.
class Pool final : public Entry<Pool> {
 public:
  using Entry::Entry;
  Pool& kernel(const PerAxis& k) { return set_key("kernel", k.json()); }
  Pool& stride(const PerAxis& s) { return set_key("stride", s.json()); }
  Pool& padding(const PerAxis& p) { return set_key("padding", p.json()); }
};

/// batch_norm.
class BatchNorm final : public Entry<BatchNorm> {
 public:
  BatchNorm() : Entry("batch_norm") {}
  BatchNorm& momentum(double m) { return set_key("momentum", m); }
  BatchNorm& epsilon(double e) { return set_key("epsilon", e); }
  /// Statistics over the whole global batch instead of each rank's slice.
  BatchNorm& sync(bool on) { return set_key("sync", on); }
};

/// dense.
class Dense final : public Entry<Dense> {
 public:
  explicit Dense(int64_t units) : Entry("dense") { put("units", units); }
  Dense& bias(bool on) { return set_key("bias", on); }
};

/// bcpnn (layers/bcpnn.hpp): H hypercolumns of M minicolumns; the other keys as docs/config.md.
class Bcpnn final : public Entry<Bcpnn> {
 public:
  Bcpnn(int64_t hypercolumns, int64_t minicolumns) : Entry("bcpnn") {
    put("hypercolumns", hypercolumns);
    put("minicolumns", minicolumns);
  }
  Bcpnn& encoding(const std::string& name) { return set_key("encoding", name); }
  Bcpnn& input_minicolumns(int64_t m) { return set_key("input_minicolumns", m); }
  Bcpnn& density(double fraction) { return set_key("density", fraction); }
  Bcpnn& trace_rate(double rate) { return set_key("trace_rate", rate); }
  Bcpnn& rewire_every(int64_t steps) { return set_key("rewire_every", steps); }
  Bcpnn& rewire_swaps(int64_t swaps) { return set_key("rewire_swaps", swaps); }
  Bcpnn& trace_precision(const std::string& type) { return set_key("trace_precision", type); }
  Bcpnn& bias_regulation(double k_half, double p_min, double rate) {
    return set_key("bias_regulation", nlohmann::json{{"k_half", k_half}, {"p_min", p_min}, {"rate", rate}});
  }
};

/// Any layer type by name with keys set one by one: the types below that have no keys of
/// their own or one (the activations among them), and types this header has no function for.
class Generic final : public Entry<Generic> {
 public:
  using Entry::Entry;
  Generic& set(const std::string& key, nlohmann::json value) { return set_key(key, std::move(value)); }
};

inline Conv conv2d(int64_t filters) { return Conv("conv2d", filters); }
inline Conv conv3d(int64_t filters) { return Conv("conv3d", filters); }
inline ConvTranspose conv_transpose2d(int64_t filters) { return ConvTranspose("conv_transpose2d", filters); }
inline ConvTranspose conv_transpose3d(int64_t filters) { return ConvTranspose("conv_transpose3d", filters); }
// Pools without a kernel take the layer's default (2).
inline Pool max_pool2d() { return Pool("max_pool2d"); }
inline Pool max_pool3d() { return Pool("max_pool3d"); }
inline Pool avg_pool2d() { return Pool("avg_pool2d"); }
inline Pool avg_pool3d() { return Pool("avg_pool3d"); }
inline Pool max_pool2d(const PerAxis& kernel) { return max_pool2d().kernel(kernel); }
inline Pool max_pool3d(const PerAxis& kernel) { return max_pool3d().kernel(kernel); }
inline Pool avg_pool2d(const PerAxis& kernel) { return avg_pool2d().kernel(kernel); }
inline Pool avg_pool3d(const PerAxis& kernel) { return avg_pool3d().kernel(kernel); }
inline BatchNorm batch_norm() { return BatchNorm(); }
inline Dense dense(int64_t units) { return Dense(units); }
inline Bcpnn bcpnn(int64_t hypercolumns, int64_t minicolumns) { return Bcpnn(hypercolumns, minicolumns); }
inline Generic global_avg_pool2d() { return Generic("global_avg_pool2d"); }
inline Generic global_avg_pool3d() { return Generic("global_avg_pool3d"); }
/// An activation of the table (ops/activations.hpp) by its row, e.g.
/// activation<ops::activations::Elu>(0.5); its key, where it has one, stays at its default.
template <class Row>
Generic activation() {
  return Generic(Row::name);
}
/// The activation of row `Row` with its key (leaky_relu's "alpha", scale's "factor") set.
template <class Row>
Generic activation(double key_value) {
  static_assert(Row::key.name != nullptr, "this activation takes no key");
  return Generic(Row::name).set(Row::key.name, key_value);
}
inline Generic relu() { return activation<ops::activations::Relu>(); }
inline Generic leaky_relu() { return activation<ops::activations::LeakyRelu>(); }
inline Generic leaky_relu(double alpha) { return activation<ops::activations::LeakyRelu>(alpha); }
inline Generic elu() { return activation<ops::activations::Elu>(); }
inline Generic elu(double alpha) { return activation<ops::activations::Elu>(alpha); }
inline Generic tanh() { return activation<ops::activations::Tanh>(); }
inline Generic scale() { return activation<ops::activations::Scale>(); }
inline Generic scale(double factor) { return activation<ops::activations::Scale>(factor); }
inline Generic dropout() { return Generic("dropout"); }
inline Generic dropout(double rate) { return dropout().set("rate", rate); }
inline Generic flatten() { return Generic("flatten"); }
/// Sums layers of one shape (a residual connection).
inline Generic add(const std::vector<std::string>& inputs) { return Generic("add").inputs(inputs); }
/// Joins layers along the channels (a U-Net skip).
inline Generic concat(const std::vector<std::string>& inputs) { return Generic("concat").inputs(inputs); }
/// A layer of any registered type (model::layer_types()), keys set with set().
inline Generic layer(const std::string& type) { return Generic(type); }

}  // namespace tessera::model::spec
