#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/ops/batch_norm.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/ops/eltwise.hpp"
#include "tessera/ops/inner_product.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::ops {

/// A provider of op implementations (kokkos, onednn, cudnn). `make_*` returns nullptr for a
/// case the backend does not support, so `auto` can fall back to the Kokkos reference.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<ConvOp> make_conv(const ConvGeometry& g) = 0;
  virtual std::unique_ptr<PoolOp> make_pool(const PoolGeometry& g) = 0;
  virtual std::unique_ptr<BatchNormOp> make_batch_norm(const BatchNormGeometry& g) = 0;
  virtual std::unique_ptr<EltwiseOp> make_eltwise(const EltwiseDesc& d) = 0;
  virtual std::unique_ptr<InnerProductOp> make_inner_product(const InnerProductGeometry& g) = 0;
};

/// Names of the backends compiled into this build, Kokkos first.
std::vector<std::string> available_backends();
/// The backend called `name`; throws Error listing the available ones otherwise.
Backend& backend(const std::string& name);

/// Creates ops for layers from a preference ("auto" or a backend name). With "auto" the
/// fastest compiled backend that supports the case is used, else Kokkos; a named backend
/// that cannot do the case is an error naming the layer.
class OpFactory {
 public:
  explicit OpFactory(std::string preference = "auto");
  const std::string& preference() const { return preference_; }
  std::unique_ptr<ConvOp> conv(const ConvGeometry& g, const std::string& layer) const;
  std::unique_ptr<PoolOp> pool(const PoolGeometry& g, const std::string& layer) const;
  std::unique_ptr<BatchNormOp> batch_norm(const BatchNormGeometry& g, const std::string& layer) const;
  std::unique_ptr<EltwiseOp> eltwise(const EltwiseDesc& d, const std::string& layer) const;
  std::unique_ptr<InnerProductOp> inner_product(const InnerProductGeometry& g, const std::string& layer) const;

 private:
  template <class Op, class Make>
  std::unique_ptr<Op> make(const std::string& layer, const std::string& what, Make&& make_with) const;
  std::string preference_;
};

}  // namespace tessera::ops
