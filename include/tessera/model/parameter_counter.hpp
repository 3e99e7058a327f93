#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/layers/parameter.hpp"

namespace tessera::model {

/// A ParameterRegistry that only counts: what layers declare is recorded (name, shape,
/// whether trainable) but no tensor is allocated, so a graph can say how many parameters each
/// rank will hold without building the model.
class ParameterCounter final : public layers::ParameterRegistry {
 public:
  layers::Parameter* declare(const std::string& name, const Shape& shape, layers::Init init, int64_t fan_in,
                             int64_t fan_out) override;
  layers::Parameter* declare_buffer(const std::string& name, const Shape& shape, layers::Init init) override;

  int64_t trainable_count() const { return trainable_count_; }
  int64_t buffer_count() const { return buffer_count_; }
  /// Every declaration, in order (value and grad empty).
  const std::vector<std::unique_ptr<layers::Parameter>>& all() const { return params_; }

 private:
  layers::Parameter* add(const std::string& name, const Shape& shape, layers::Init init, bool trainable);
  std::vector<std::unique_ptr<layers::Parameter>> params_;
  int64_t trainable_count_ = 0, buffer_count_ = 0;
};

}  // namespace tessera::model
