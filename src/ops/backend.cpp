#include "tessera/ops/backend.hpp"

namespace tessera::ops {
namespace {

/// Calls `create`, and passes its reason on where the caller asked for one.
template <class Op, class Create>
std::unique_ptr<Op> offer(std::string* why, Create&& create) {
  std::string reason;
  auto op = create(reason);
  if (!op && why != nullptr) *why = reason.empty() ? std::string("declined without a reason") : reason;
  return op;
}

}  // namespace

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::conv: return "convolution";
    case OpKind::pool: return "pooling";
    case OpKind::batch_norm: return "batch norm";
    case OpKind::eltwise: return "activation";
    case OpKind::inner_product: return "inner product";
  }
  return "op";
}

std::unique_ptr<ConvOp> Backend::make_conv(const ConvGeometry& g, std::string* why) {
  return offer<ConvOp>(why, [&](std::string& r) { return create_conv(g, r); });
}
std::unique_ptr<PoolOp> Backend::make_pool(const PoolGeometry& g, std::string* why) {
  return offer<PoolOp>(why, [&](std::string& r) { return create_pool(g, r); });
}
std::unique_ptr<BatchNormOp> Backend::make_batch_norm(const BatchNormGeometry& g, std::string* why) {
  return offer<BatchNormOp>(why, [&](std::string& r) { return create_batch_norm(g, r); });
}
std::unique_ptr<EltwiseOp> Backend::make_eltwise(const EltwiseDesc& d, std::string* why) {
  return offer<EltwiseOp>(why, [&](std::string& r) { return create_eltwise(d, r); });
}
std::unique_ptr<InnerProductOp> Backend::make_inner_product(const InnerProductGeometry& g, std::string* why) {
  return offer<InnerProductOp>(why, [&](std::string& r) { return create_inner_product(g, r); });
}

std::unique_ptr<ConvOp> Backend::create_conv(const ConvGeometry&, std::string& why) {
  why = lacks(OpKind::conv);
  return nullptr;
}
std::unique_ptr<PoolOp> Backend::create_pool(const PoolGeometry&, std::string& why) {
  why = lacks(OpKind::pool);
  return nullptr;
}
std::unique_ptr<BatchNormOp> Backend::create_batch_norm(const BatchNormGeometry&, std::string& why) {
  why = lacks(OpKind::batch_norm);
  return nullptr;
}
std::unique_ptr<EltwiseOp> Backend::create_eltwise(const EltwiseDesc&, std::string& why) {
  why = lacks(OpKind::eltwise);
  return nullptr;
}
std::unique_ptr<InnerProductOp> Backend::create_inner_product(const InnerProductGeometry&, std::string& why) {
  why = lacks(OpKind::inner_product);
  return nullptr;
}

std::string Backend::lacks(OpKind kind) const { return std::string("no ") + op_kind_name(kind); }

}  // namespace tessera::ops
