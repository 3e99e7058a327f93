#pragma once
// Checks an optimizer against its update rule recomputed on host in double (the tests in
// tests/optim): the same parameter and gradients for a few steps with a learning rate that
// changes every step, so a step that ignored its argument shows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/config.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/optim/optimizer.hpp"

namespace tessera::testing {

constexpr int64_t optimizer_numel = 4096;
constexpr int optimizer_steps = 6;

/// `optimizer_numel` values scale·N(0, 1) from (seed, stream).
inline std::vector<float> optimizer_vector(uint64_t seed, uint64_t stream, float scale) {
  std::vector<float> v(static_cast<size_t>(optimizer_numel));
  for (int64_t i = 0; i < optimizer_numel; ++i)
    v[static_cast<size_t>(i)] = scale * rng::normal(seed, stream, static_cast<uint64_t>(i));
  return v;
}

/// Largest |got − want| / max(|want|, 1): relative for parameters of order one and above.
inline double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0.0;
  for (size_t i = 0; i < want.size(); ++i)
    e = std::max(e, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), 1.0));
  return e;
}

/// The parameters after the update rule in double from `p0` with `grads`, one per step.
using ReferenceUpdate =
    std::function<std::vector<double>(const std::vector<float>& p0, const std::vector<std::vector<float>>& grads)>;

/// Runs `optimizer` for `optimizer_steps` steps (rate lr_at(step)) on parameters and gradients
/// drawn from `seed`, and checks: the step count, that gradients are read and never written,
/// and the parameters against `reference` within `tolerance` (reported as "`what`: ...").
inline void check_against_reference(const std::string& what, optim::Optimizer& optimizer, const ReferenceUpdate& reference,
                                    uint64_t seed, const std::function<float(int)>& lr_at, double tolerance) {
  const auto p0 = optimizer_vector(seed, 1, 1.0f);
  std::vector<std::vector<float>> grads;
  for (int s = 0; s < optimizer_steps; ++s) grads.push_back(optimizer_vector(seed, 100 + static_cast<uint64_t>(s), 0.5f));

  Tensor values(Shape{optimizer_numel}), g(Shape{optimizer_numel});
  values.copy_from_host(p0);
  optimizer.bind(values, g);
  for (int s = 0; s < optimizer_steps; ++s) {
    g.copy_from_host(grads[static_cast<size_t>(s)]);
    optimizer.step(lr_at(s));
  }
  CHECK(optimizer.steps() == optimizer_steps);
  CHECK(g.to_host() == grads.back());  // gradients are read, never written

  const double err = max_error(values.to_host(), reference(p0, grads));
  std::ostringstream line;
  line << what << ": max relative error vs double reference after " << optimizer_steps << " steps = " << err
       << " (tolerance " << tolerance << ")";
  WARN(line.str());
  CHECK(err < tolerance);
}

/// The message of the ConfigError an "optimizer" section raises, or "no error".
inline std::string config_error(const nlohmann::json& j) {
  ConfigObject cfg(j, "$.optimizer");
  try {
    optim::Optimizer::from_json(cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace tessera::testing
