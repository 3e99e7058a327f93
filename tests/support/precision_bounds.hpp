#pragma once
// What a 16-bit op is checked against: its fp32 counterpart on the same values. The inputs are
// values the 16-bit type holds exactly, so both ops read the same numbers; the 16-bit op then
// differs only by the rounding of the weights it reads and of its outputs, each at most the
// unit roundoff u (2^-8 for bf16, 2^-11 for fp16) relative, so each element must lie within
//   u·|y| + u·(|x| ⊛ |w|)   (plus fp32 summation error)
// of the fp32 result, with |x| ⊛ |w| the same op on absolute values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/backend_comparison.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::testing {

/// Random values in [-1, 1] that `exact` (bf16 or fp16) holds exactly (random_tensor's,
/// rounded), in a tensor of `type`.
inline Tensor half_values(const Shape& shape, uint32_t seed, ElementType exact, ElementType type) {
  Tensor rounded(shape, exact);
  deep_copy(rounded, random_tensor(shape, seed));
  if (type == exact) return rounded;
  Tensor t(shape, type);
  deep_copy(t, rounded);
  return t;
}

/// |t| elementwise, as fp32.
inline Tensor absolute(const Tensor& t) {
  std::vector<float> v = t.to_host();
  for (auto& e : v) e = std::fabs(e);
  Tensor a(t.shape());
  a.copy_from_host(v);
  return a;
}

/// t's values in an fp32 tensor (exact).
inline Tensor as_fp32(const Tensor& t) {
  Tensor f(t.shape());
  deep_copy(f, t);
  return f;
}

/// Half the spacing of `type`'s subnormals (2^-25 for fp16): the absolute error of rounding a
/// value below the type's smallest normal, where a relative bound no longer holds.
inline double underflow_error(ElementType type) {
  return type == ElementType::fp16 ? 0x1p-25 : type == ElementType::bf16 ? 0x1p-134 : 0.0;
}

/// Every element of `got` within rel·|want| + slack·bound + absolute of `want`.
inline void check_within(const std::string& what, const Tensor& got, const Tensor& want, const Tensor& bound,
                         double rel, double slack, double absolute = 0.0) {
  const auto g = got.to_host(), w = want.to_host(), b = bound.to_host();
  REQUIRE(g.size() == w.size());
  double worst = 0.0;  // the largest |error| / allowed
  for (size_t i = 0; i < g.size(); ++i) {
    const double allowed = rel * std::fabs(w[i]) + slack * b[i] + absolute + 1e-30;
    worst = std::max(worst, std::fabs(static_cast<double>(g[i]) - w[i]) / allowed);
  }
  INFO(what << ": worst error " << worst << " of the bound");
  CHECK(worst <= 1.0);
}

}  // namespace tessera::testing
