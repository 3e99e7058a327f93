#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "tessera/ops/batch_norm.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/ops/eltwise.hpp"
#include "tessera/ops/inner_product.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::ops {

/// The kinds of op a backend may provide.
enum class OpKind { conv, pool, batch_norm, eltwise, inner_product };
/// "convolution", "pooling", "batch norm", "activation", "inner product".
const char* op_kind_name(OpKind kind);

/// A provider of op implementations (kokkos, onednn, cudnn). Each `make_*` returns the op for
/// one case, or nullptr and — when `why` is given — the reason the backend declines it, so
/// that the registry can fall back to another backend and say why. A backend overrides only
/// the `create_*` of the ops it has; for the others it may say, through `lacks`, why it has
/// none. A backend also declines, in `make_*`, any case with a tensor larger than its
/// `max_tensor_elements()`, before it reaches the library that would misbehave on it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// The most elements one tensor of an op may have on this backend (libraries that index
  /// with 32-bit integers cannot take more). Unlimited unless a backend says otherwise.
  virtual int64_t max_tensor_elements() const { return std::numeric_limits<int64_t>::max(); }

  std::unique_ptr<ConvOp> make_conv(const ConvGeometry& g, std::string* why = nullptr);
  std::unique_ptr<PoolOp> make_pool(const PoolGeometry& g, std::string* why = nullptr);
  std::unique_ptr<BatchNormOp> make_batch_norm(const BatchNormGeometry& g, std::string* why = nullptr);
  std::unique_ptr<EltwiseOp> make_eltwise(const EltwiseDesc& d, std::string* why = nullptr);
  std::unique_ptr<InnerProductOp> make_inner_product(const InnerProductGeometry& g, std::string* why = nullptr);

 protected:
  /// Each returns the op, or nullptr after writing the reason into `why`. The defaults decline
  /// with lacks(kind).
  virtual std::unique_ptr<ConvOp> create_conv(const ConvGeometry& g, std::string& why);
  virtual std::unique_ptr<PoolOp> create_pool(const PoolGeometry& g, std::string& why);
  virtual std::unique_ptr<BatchNormOp> create_batch_norm(const BatchNormGeometry& g, std::string& why);
  virtual std::unique_ptr<EltwiseOp> create_eltwise(const EltwiseDesc& d, std::string& why);
  virtual std::unique_ptr<InnerProductOp> create_inner_product(const InnerProductGeometry& g, std::string& why);
  /// Why this backend has no op of `kind` at all ("no batch norm" unless a backend says more).
  virtual std::string lacks(OpKind kind) const;
  /// Why this backend has no op of `kind` computing in `type`, or "" when it has one (fp32
  /// only, unless a backend says more). Asked before create_*, so that a backend's ops see
  /// only the types it declared.
  virtual std::string lacks_precision(OpKind kind, ElementType type) const;
};

}  // namespace tessera::ops
