#pragma once
// A minimal ParameterRegistry for layer tests: every parameter gets its own tensors at
// declaration, so a layer can be set up and run without a model's ParameterStore.
#include <memory>
#include <string>
#include <vector>

#include "support/gradient_check.hpp"
#include "tessera/core/error.hpp"
#include "tessera/layers/parameter.hpp"

namespace tessera::testing {

class SimpleParameters final : public layers::ParameterRegistry {
 public:
  layers::Parameter* declare(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                             int64_t fan_out) override {
    return add(name, shape, init, fan_in, fan_out, true);
  }
  layers::Parameter* declare_buffer(const std::string& name, const Shape& shape, layers::Init init) override {
    return add(name, shape, init, 1, 1, false);
  }

  layers::Parameter& at(const std::string& name) const {
    for (const auto& p : params_)
      if (p->name == name) return *p;
    throw Error("test: no parameter named '" + name + "'");
  }
  const std::vector<std::unique_ptr<layers::Parameter>>& all() const { return params_; }

 private:
  layers::Parameter* add(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                         int64_t fan_out, bool trainable) {
    for (const auto& p : params_)
      if (p->name == name) throw Error("test: parameter '" + name + "' declared twice");
    auto p = std::make_unique<layers::Parameter>();
    p->name = name;
    p->shape = shape;
    p->init = init;
    p->fan_in = fan_in;
    p->fan_out = fan_out;
    p->trainable = trainable;
    p->value = Tensor(shape, name);
    if (init == layers::Init::ones) p->value.fill(1.0f);
    // Random kinds get a fixed spread of values; tests that care set values themselves.
    if (init == layers::Init::weight || init == layers::Init::he_normal || init == layers::Init::glorot_uniform ||
        init == layers::Init::uniform_fan_in)
      p->value.copy_from_host(
          random_vector<float>(static_cast<size_t>(shape.numel()), 7u + static_cast<unsigned>(params_.size())));
    if (trainable) p->grad = Tensor(shape, name + ".grad");
    params_.push_back(std::move(p));
    return params_.back().get();
  }
  std::vector<std::unique_ptr<layers::Parameter>> params_;
};

}  // namespace tessera::testing
