#pragma once
// The portable reference backend. Each op's Kokkos implementation lives in its own file;
// these factories are what KokkosBackend hands out.
#include <memory>

#include "tessera/ops/backend.hpp"

namespace tessera::kokkos_backend {

std::unique_ptr<ops::Backend> make_backend();

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g);
std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g);
std::unique_ptr<ops::BatchNormOp> make_batch_norm(const ops::BatchNormGeometry& g);
std::unique_ptr<ops::EltwiseOp> make_eltwise(const ops::EltwiseDesc& d);
std::unique_ptr<ops::InnerProductOp> make_inner_product(const ops::InnerProductGeometry& g);

}  // namespace tessera::kokkos_backend
