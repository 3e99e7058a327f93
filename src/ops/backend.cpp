#include "tessera/ops/backend.hpp"

#include <initializer_list>
#include <utility>

namespace tessera::ops {
namespace {

/// The reason `backend` cannot take an op whose tensors have these shapes, or "" if it can.
std::string too_large(const Backend& backend, std::initializer_list<Shape> shapes) {
  const int64_t limit = backend.max_tensor_elements();
  for (const Shape& s : shapes) {
    const int64_t n = s.numel();
    if (n > limit)
      return "a tensor of " + std::to_string(n) + " elements (" + s.str() + ") exceeds " + backend.name() +
             "'s limit of " + std::to_string(limit) + " elements per tensor";
  }
  return {};
}

/// Calls `create`, and passes its reason on where the caller asked for one.
template <class Op, class Create>
std::unique_ptr<Op> offer(std::string* why, Create&& create) {
  std::string reason;
  auto op = create(reason);
  if (!op && why != nullptr) *why = reason.empty() ? std::string("declined without a reason") : reason;
  return op;
}

/// Declines with `reason` where it is not empty; otherwise offers the op.
template <class Op, class Create>
std::unique_ptr<Op> offer_within(std::string* why, const std::string& reason, Create&& create) {
  if (!reason.empty()) {
    if (why != nullptr) *why = reason;
    return nullptr;
  }
  return offer<Op>(why, std::forward<Create>(create));
}

/// The first of `reasons` that is not empty, or "".
std::string first_of(std::initializer_list<std::string> reasons) {
  for (const std::string& r : reasons)
    if (!r.empty()) return r;
  return {};
}

}  // namespace

std::string Backend::lacks_precision(OpKind kind, ElementType type) const {
  if (type == ElementType::fp32) return {};
  return "no " + std::string(element_type_name(type)) + " " + op_kind_name(kind) + " in the " + name() + " backend";
}

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
  return offer_within<ConvOp>(why,
                              first_of({lacks_precision(OpKind::conv, g.type),
                                        too_large(*this, {g.input_shape(), g.output_shape(), g.weight_shape()})}),
                              [&](std::string& r) { return create_conv(g, r); });
}
std::unique_ptr<PoolOp> Backend::make_pool(const PoolGeometry& g, std::string* why) {
  return offer_within<PoolOp>(
      why, first_of({lacks_precision(OpKind::pool, g.type), too_large(*this, {g.input_shape(), g.output_shape()})}),
                              [&](std::string& r) { return create_pool(g, r); });
}
std::unique_ptr<BatchNormOp> Backend::make_batch_norm(const BatchNormGeometry& g, std::string* why) {
  return offer_within<BatchNormOp>(why,
                                   first_of({lacks_precision(OpKind::batch_norm, g.type),
                                             too_large(*this, {Shape{g.rows, g.channels}})}),
                                   [&](std::string& r) { return create_batch_norm(g, r); });
}
std::unique_ptr<EltwiseOp> Backend::make_eltwise(const EltwiseDesc& d, std::string* why) {
  return offer_within<EltwiseOp>(why, lacks_precision(OpKind::eltwise, d.type),
                                 [&](std::string& r) { return create_eltwise(d, r); });
}
std::unique_ptr<InnerProductOp> Backend::make_inner_product(const InnerProductGeometry& g, std::string* why) {
  const Shape input{g.batch, g.in_features}, output{g.batch, g.out_features}, weight{g.out_features, g.in_features};
  return offer_within<InnerProductOp>(
      why, first_of({lacks_precision(OpKind::inner_product, g.type), too_large(*this, {input, output, weight})}),
      [&](std::string& r) { return create_inner_product(g, r); });
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
