#include "tessera/registry/op_factory.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/registry/backend_registry.hpp"

namespace tessera::registry {

std::string OpChoice::str() const { return declined.empty() ? backend : backend + " (" + declined + ")"; }

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
      if (!declined.empty()) {
        // Said once per layer and case, so a user sees which layers run on the slow path.
        static std::mutex m;
        static std::vector<std::string> said;
        std::lock_guard<std::mutex> lock(m);
        if (std::find(said.begin(), said.end(), layer + what) == said.end()) {
          said.push_back(layer + what);
          log::info("note: layer '" + layer + "' runs " + what + " on " + name + ": " + declined);
        }
      }
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
