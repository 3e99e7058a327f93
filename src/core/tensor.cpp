#include "tessera/core/tensor.hpp"

#include "tessera/core/error.hpp"

namespace tessera {

Tensor::Tensor(const Shape& shape, const std::string& label)
    : shape_(shape), storage_(label, static_cast<size_t>(shape.numel())) {}

Tensor::Tensor(const Shape& shape, DeviceView<float> storage) : shape_(shape), storage_(std::move(storage)) {
  require_shape(static_cast<int64_t>(storage_.extent(0)) >= shape.numel(),
                "storage of " + std::to_string(storage_.extent(0)) + " elements is too small for shape " +
                    shape.str());
}

Tensor Tensor::reshaped(const Shape& shape) const {
  require_shape(shape.numel() == numel(), "cannot reshape " + shape_.str() + " to " + shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::slice(int64_t offset, const Shape& shape) const {
  require_shape(offset >= 0 && offset + shape.numel() <= static_cast<int64_t>(storage_.extent(0)),
                "slice of " + shape.str() + " at offset " + std::to_string(offset) + " is outside a tensor of " +
                    std::to_string(storage_.extent(0)) + " elements");
  auto sub = Kokkos::subview(storage_, std::make_pair(offset, offset + shape.numel()));
  return Tensor(shape, DeviceView<float>(sub));
}

std::vector<float> Tensor::to_host() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(out.data(), out.size());
  Kokkos::deep_copy(host, Kokkos::subview(storage_, std::make_pair<int64_t, int64_t>(0, numel())));
  return out;
}

void Tensor::copy_from_host(const std::vector<float>& values) const {
  require_shape(static_cast<int64_t>(values.size()) == numel(),
                "copy_from_host: " + std::to_string(values.size()) + " values for a tensor of shape " + shape_.str());
  Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(values.data(),
                                                                                             values.size());
  Kokkos::deep_copy(Kokkos::subview(storage_, std::make_pair<int64_t, int64_t>(0, numel())), host);
}

void Tensor::fill(float value) const {
  Kokkos::deep_copy(Kokkos::subview(storage_, std::make_pair<int64_t, int64_t>(0, numel())), value);
}

Tensor Tensor::clone(const std::string& label) const {
  Tensor t(shape_, label);
  deep_copy(t, *this);
  return t;
}

void deep_copy(const Tensor& dst, const Tensor& src) {
  require_shape(dst.numel() == src.numel(),
                "deep_copy between tensors of " + dst.shape().str() + " and " + src.shape().str());
  const auto range = std::make_pair<int64_t, int64_t>(0, src.numel());
  Kokkos::deep_copy(Kokkos::subview(dst.view(), range), Kokkos::subview(src.view(), range));
}

void ensure_shape(Tensor& t, const Shape& shape, const std::string& label) {
  if (!t.empty() && t.numel() == shape.numel()) {
    if (t.shape() != shape) t = t.reshaped(shape);
    return;
  }
  t = Tensor(shape, label);
}

}  // namespace tessera
