#include <map>
#include <mutex>

#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/build_info.hpp"
#if TESSERA_ENABLE_ONEDNN
#include "tessera/backends/onednn/onednn_backend.hpp"
#endif
#if TESSERA_ENABLE_CUDNN
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#endif
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/ops/backend.hpp"

namespace tessera::ops {
namespace {

struct Registry {
  std::vector<std::unique_ptr<Backend>> backends;  // in order of preference for "auto", Kokkos last
  Registry() {
    // Vendor backends come first: "auto" takes the first that supports a case.
#if TESSERA_ENABLE_CUDNN
    backends.push_back(cudnn_backend::make_backend());
#endif
#if TESSERA_ENABLE_ONEDNN
    backends.push_back(onednn_backend::make_backend());
#endif
    backends.push_back(kokkos_backend::make_backend());
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& b : registry().backends) names.push_back(b->name());
  return names;
}

Backend& backend(const std::string& name) {
  for (const auto& b : registry().backends)
    if (b->name() == name) return *b;
  std::string list;
  for (const auto& n : available_backends()) list += (list.empty() ? "" : ", ") + n;
  throw Error("backend '" + name + "' is not compiled into this build (available: auto, " + list + ")");
}

OpFactory::OpFactory(std::string preference) : preference_(std::move(preference)) {
  if (preference_ != "auto") backend(preference_);  // validate early
}

template <class Op, class Make>
std::unique_ptr<Op> OpFactory::make(const std::string& layer, const std::string& what, Make&& make_with) const {
  if (preference_ != "auto") {
    auto op = make_with(backend(preference_));
    if (!op)
      throw Error("layer '" + layer + "': backend '" + preference_ + "' does not support " + what +
                  "; choose another backend for this layer or use \"auto\"");
    return op;
  }
  const auto& all = registry().backends;
  for (size_t i = 0; i < all.size(); ++i) {
    if (auto op = make_with(*all[i])) {
      if (i + 1 == all.size() && all.size() > 1) {
        // Said once per layer and case, so a user sees which layers run on the slow path.
        static std::mutex m;
        static std::map<std::string, bool> said;
        std::lock_guard<std::mutex> lock(m);
        if (!said[layer + what]) {
          said[layer + what] = true;
          log::info("note: layer '" + layer + "' falls back to the Kokkos kernels for " + what);
        }
      }
      return op;
    }
  }
  throw Error("layer '" + layer + "': no backend supports " + what);
}

std::unique_ptr<ConvOp> OpFactory::conv(const ConvGeometry& g, const std::string& layer) const {
  return make<ConvOp>(layer, "convolution " + g.str(), [&](Backend& b) { return b.make_conv(g); });
}
std::unique_ptr<PoolOp> OpFactory::pool(const PoolGeometry& g, const std::string& layer) const {
  return make<PoolOp>(layer, "pooling " + g.str(), [&](Backend& b) { return b.make_pool(g); });
}
std::unique_ptr<BatchNormOp> OpFactory::batch_norm(const BatchNormGeometry& g, const std::string& layer) const {
  return make<BatchNormOp>(layer, "batch norm over " + std::to_string(g.channels) + " channels",
                           [&](Backend& b) { return b.make_batch_norm(g); });
}
std::unique_ptr<EltwiseOp> OpFactory::eltwise(const EltwiseDesc& d, const std::string& layer) const {
  return make<EltwiseOp>(layer, d.str(), [&](Backend& b) { return b.make_eltwise(d); });
}
std::unique_ptr<InnerProductOp> OpFactory::inner_product(const InnerProductGeometry& g,
                                                         const std::string& layer) const {
  return make<InnerProductOp>(layer,
                              "inner product " + std::to_string(g.in_features) + "->" + std::to_string(g.out_features),
                              [&](Backend& b) { return b.make_inner_product(g); });
}

}  // namespace tessera::ops
