#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/ops/backend.hpp"

namespace tessera::registry {

/// Which backend runs one op of one layer, and why the backends tried before it did not.
struct OpChoice {
  std::string layer;    // the layer that asked
  std::string op;       // "convolution 3d 4->16 k3x3x3 ...", "batch norm over 16 channels", ...
  std::string backend;  // the backend that runs it
  /// "onednn: <why it declined>; ..." for each backend tried first, empty when the first
  /// backend tried (or the one named) took it.
  std::string declined;
  /// "kokkos (onednn: ...)", or just the backend.
  std::string str() const;
  /// What kind of op, without its sizes or parameters: "batch norm", "leaky_relu", "convolution".
  std::string kind() const;
};

/// One line per (kind of op, backend that runs it, why the others declined) over `choices`,
/// naming the layers: "note: layers bn1, bn2 run batch norm on kokkos: onednn: <why>". Empty
/// when every op ran on the first backend tried.
std::vector<std::string> declined_notes(const std::vector<OpChoice>& choices);

/// Creates ops for layers from a preference ("auto" or a backend name). With "auto" the first
/// compiled backend (in available_backends() order) that supports the case is used, else an
/// error; a named backend that cannot do the case is an error naming the layer and the reason.
/// Every choice is recorded, so a run can show which backend runs each layer and why.
class OpFactory {
 public:
  explicit OpFactory(std::string preference = "auto");
  const std::string& preference() const { return preference_; }
  std::unique_ptr<ops::ConvOp> conv(const ops::ConvGeometry& g, const std::string& layer) const;
  std::unique_ptr<ops::PoolOp> pool(const ops::PoolGeometry& g, const std::string& layer) const;
  std::unique_ptr<ops::BatchNormOp> batch_norm(const ops::BatchNormGeometry& g, const std::string& layer) const;
  std::unique_ptr<ops::EltwiseOp> eltwise(const ops::EltwiseDesc& d, const std::string& layer) const;
  std::unique_ptr<ops::InnerProductOp> inner_product(const ops::InnerProductGeometry& g,
                                                     const std::string& layer) const;

  /// The latest choice for each (layer, op) this factory made, in the order first made.
  std::vector<OpChoice> choices() const;
  /// The choices made for `layer`.
  std::vector<OpChoice> choices_for(const std::string& layer) const;

 private:
  template <class Op, class Make>
  std::unique_ptr<Op> make(const std::string& layer, const std::string& what, Make&& make_with) const;
  void record(OpChoice choice) const;

  std::string preference_;
  // Ops are created in const layer methods (reshape); the record is bookkeeping beside them.
  mutable std::mutex mutex_;
  mutable std::vector<OpChoice> choices_;
};

}  // namespace tessera::registry
