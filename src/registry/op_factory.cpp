#include "tessera/registry/op_factory.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/registry/backend_registry.hpp"

namespace tessera::registry {

std::string OpChoice::str() const { return declined.empty() ? backend : backend + " (" + declined + ")"; }

std::string OpChoice::kind() const {
  const std::string head = op.substr(0, op.find('('));
  std::string out, word;
  for (size_t i = 0; i <= head.size(); ++i) {
    if (i < head.size() && head[i] != ' ') {
      word += head[i];
      continue;
    }
    if (word == "over" || std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) break;
    if (!word.empty()) out += (out.empty() ? "" : " ") + word;
    word.clear();
  }
  return out;
}

std::vector<std::string> declined_notes(const std::vector<OpChoice>& choices) {
  struct Group {
    std::string kind, backend, declined;
    std::vector<std::string> layers;
  };
  std::vector<Group> groups;
  for (const auto& c : choices) {
    if (c.declined.empty()) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
      return x.kind == c.kind() && x.backend == c.backend && x.declined == c.declined;
    });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{c.kind(), c.backend, c.declined, {}});
    if (std::find(g->layers.begin(), g->layers.end(), c.layer) == g->layers.end()) g->layers.push_back(c.layer);
  }
  std::vector<std::string> notes;
  for (const auto& g : groups) {
    std::string names;
    for (const auto& l : g.layers) names += (names.empty() ? "" : ", ") + l;
    notes.push_back("note: " + std::string(g.layers.size() > 1 ? "layers " : "layer ") + names + " run" +
                    (g.layers.size() > 1 ? "" : "s") + " " + g.kind + " on " + g.backend + ": " + g.declined);
  }
  return notes;
}

OpFactory::OpFactory(std::string preference) : preference_(std::move(preference)) {
  if (preference_ != "auto") backend(preference_);  // validate early
}

void OpFactory::record(OpChoice choice) const {
  // One entry per layer and kind of op: an op made again for a new batch shape (or a second
  // op of the same kind, such as a fused layer's last slab) replaces the earlier entry.
  const auto kind = [](const std::string& op) { return op.substr(0, op.find(' ')); };
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& c : choices_)
    if (c.layer == choice.layer && kind(c.op) == kind(choice.op)) {
      c = std::move(choice);
      return;
    }
  choices_.push_back(std::move(choice));
}

std::vector<OpChoice> OpFactory::choices() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return choices_;
}

std::vector<OpChoice> OpFactory::choices_for(const std::string& layer) const {
  std::vector<OpChoice> mine;
  for (auto& c : choices())
    if (c.layer == layer) mine.push_back(std::move(c));
  return mine;
}

template <class Op, class Make>
std::unique_ptr<Op> OpFactory::make(const std::string& layer, const std::string& what, Make&& make_with) const {
  if (preference_ != "auto") {
    std::string why;
    auto op = make_with(backend(preference_), why);
    if (!op)
      throw Error("layer '" + layer + "': backend '" + preference_ + "' does not support " + what + " (" + why +
                  "); choose another backend for this layer or use \"auto\"");
    record({layer, what, preference_, ""});
    return op;
  }
  std::string declined;
  for (const auto& name : available_backends()) {
    std::string why;
    if (auto op = make_with(backend(name), why)) {
      // The model says which layers run on a fallback, once, when it is built (declined_notes).
      record({layer, what, name, declined});
      return op;
    }
    declined += (declined.empty() ? "" : "; ") + name + ": " + why;
  }
  throw Error("layer '" + layer + "': no backend supports " + what + " (" + declined + ")");
}

std::unique_ptr<ops::ConvOp> OpFactory::conv(const ops::ConvGeometry& g, const std::string& layer) const {
  return make<ops::ConvOp>(layer, "convolution " + g.str(),
                           [&](ops::Backend& b, std::string& why) { return b.make_conv(g, &why); });
}
std::unique_ptr<ops::PoolOp> OpFactory::pool(const ops::PoolGeometry& g, const std::string& layer) const {
  return make<ops::PoolOp>(layer, "pooling " + g.str(),
                           [&](ops::Backend& b, std::string& why) { return b.make_pool(g, &why); });
}
std::unique_ptr<ops::BatchNormOp> OpFactory::batch_norm(const ops::BatchNormGeometry& g,
                                                        const std::string& layer) const {
  return make<ops::BatchNormOp>(layer, "batch norm over " + std::to_string(g.channels) + " channels",
                                [&](ops::Backend& b, std::string& why) { return b.make_batch_norm(g, &why); });
}
std::unique_ptr<ops::EltwiseOp> OpFactory::eltwise(const ops::EltwiseDesc& d, const std::string& layer) const {
  return make<ops::EltwiseOp>(layer, d.str(),
                              [&](ops::Backend& b, std::string& why) { return b.make_eltwise(d, &why); });
}
std::unique_ptr<ops::InnerProductOp> OpFactory::inner_product(const ops::InnerProductGeometry& g,
                                                              const std::string& layer) const {
  return make<ops::InnerProductOp>(
      layer, "inner product " + std::to_string(g.in_features) + "->" + std::to_string(g.out_features),
      [&](ops::Backend& b, std::string& why) { return b.make_inner_product(g, &why); });
}

}  // namespace tessera::registry
