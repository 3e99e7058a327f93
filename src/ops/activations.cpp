#include "tessera/ops/activations.hpp"

#include <array>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::ops {

const ActivationInfo& activation_info(EltwiseKind kind) {
  static const auto rows = [] {
    std::array<ActivationInfo, Activations::size> r{};
    size_t k = 0;
    Activations::for_each([&](auto row) { r[k++] = info_of<decltype(row)>(); });
    return r;
  }();
  const auto k = static_cast<size_t>(kind);
  if (k >= rows.size()) throw Error("activation kind " + std::to_string(k) + " has no row in ops::Activations");
  return rows[k];
}

}  // namespace tessera::ops
