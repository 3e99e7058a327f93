#include "tessera/model/parameter_counter.hpp"

namespace tessera::model {

layers::Parameter* ParameterCounter::add(const std::string& name, const Shape& shape, layers::Init init,
                                         bool trainable) {
  auto p = std::make_unique<layers::Parameter>();
  p->name = name;
  p->shape = shape;
  p->init = init;
  p->trainable = trainable;
  (trainable ? trainable_count_ : buffer_count_) += shape.numel();
  params_.push_back(std::move(p));
  return params_.back().get();
}

layers::Parameter* ParameterCounter::declare(const std::string& name, const Shape& shape, layers::Init init,
                                             int64_t /*fan_in*/, int64_t /*fan_out*/) {
  return add(name, shape, init, true);
}

layers::Parameter* ParameterCounter::declare_buffer(const std::string& name, const Shape& shape, layers::Init init) {
  return add(name, shape, init, false);
}

}  // namespace tessera::model
