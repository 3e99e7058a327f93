#pragma once
// A minimal ParameterRegistry for layer tests: each declared parameter gets its own value and
// grad tensors at once, weights filled deterministically (the model's ParameterStore is not
// needed to test one layer).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/layers/parameter.hpp"

namespace tessera::testing {

class TestParameters final : public layers::ParameterRegistry {
 public:
  explicit TestParameters(uint64_t seed = 1234) : seed_(seed) {}

  layers::Parameter* declare(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                             int64_t fan_out) override {
    return add(name, shape, init, fan_in, fan_out, true);
  }
  layers::Parameter* declare_buffer(const std::string& name, const Shape& shape, layers::Init init) override {
    return add(name, shape, init, 1, 1, false);
  }

  /// The parameter called `name`; throws if none was declared.
  layers::Parameter& operator[](const std::string& name) const {
    for (const auto& p : params_)
      if (p->name == name) return *p;
    throw Error("test parameters: no parameter '" + name + "'");
  }
  layers::Parameter& at(const std::string& name) const { return (*this)[name]; }
  bool has(const std::string& name) const {
    for (const auto& p : params_)
      if (p->name == name) return true;
    return false;
  }
  const std::vector<std::unique_ptr<layers::Parameter>>& all() const { return params_; }
  /// Runs the fill of every Init::custom parameter, in declaration order (as the model's
  /// store does when it initialises): call once the layer is set up.
  void fill_custom() const {
    for (const auto& p : params_)
      if (p->init == layers::Init::custom && p->fill) p->fill(p->value);
  }

 private:
  layers::Parameter* add(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                         int64_t fan_out, bool trainable) {
    if (has(name)) throw Error("test parameters: '" + name + "' declared twice");
    auto p = std::make_unique<layers::Parameter>();
    p->name = name;
    p->shape = shape;
    p->init = init;
    p->fan_in = fan_in;
    p->fan_out = fan_out;
    p->trainable = trainable;
    p->value = Tensor(shape, name);
    if (trainable) p->grad = Tensor(shape, name + ".grad");
    p->value.copy_from_host(initial_values(*p));
    params_.push_back(std::move(p));
    return params_.back().get();
  }

  std::vector<float> initial_values(const layers::Parameter& p) const {
    std::vector<float> v(static_cast<size_t>(p.shape.numel()), 0.0f);
    const uint64_t stream = rng::stream_of(p.name);
    switch (p.init) {
      case layers::Init::zeros:
      case layers::Init::custom:  // filled by fill_custom() once declared
      case layers::Init::bias: break;
      case layers::Init::ones: std::fill(v.begin(), v.end(), 1.0f); break;
      case layers::Init::weight:
      case layers::Init::uniform_fan_in:
      case layers::Init::he_normal: {
        const float scale = std::sqrt(2.0f / static_cast<float>(p.fan_in));
        for (size_t i = 0; i < v.size(); ++i) v[i] = scale * rng::normal(seed_, stream, i);
        break;
      }
      case layers::Init::glorot_uniform: {
        const float limit = std::sqrt(6.0f / static_cast<float>(p.fan_in + p.fan_out));
        for (size_t i = 0; i < v.size(); ++i) v[i] = limit * (2.0f * rng::uniform(seed_, stream, i) - 1.0f);
        break;
      }
    }
    return v;
  }

  uint64_t seed_;
  std::vector<std::unique_ptr<layers::Parameter>> params_;
};

}  // namespace tessera::testing
