#include "tessera/optim/parameter_tensors.hpp"

#include "tessera/core/error.hpp"

namespace tessera::optim {

ParameterTensors ParameterTensors::single(int64_t numel) {
  ParameterTensors t;
  if (numel > 0) t.tensors.push_back({0, numel, false});
  return t;
}

std::vector<int64_t> ParameterTensors::offsets() const {
  std::vector<int64_t> o{0};
  for (const auto& t : tensors) o.push_back(t.offset + t.numel);
  return o;
}

void ParameterTensors::check_tiles(int64_t numel, const std::string& optimizer) const {
  int64_t next = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k].offset != next || tensors[k].numel < 0)
      throw Error(optimizer + ": parameter tensor " + std::to_string(k) + " covers [" +
                  std::to_string(tensors[k].offset) + ", " + std::to_string(tensors[k].offset + tensors[k].numel) +
                  "), expected it to start at " + std::to_string(next));
    next += tensors[k].numel;
  }
  if (next != numel)
    throw Error(optimizer + ": the parameter tensors cover " + std::to_string(next) + " elements, the buffer holds " +
                std::to_string(numel));
}

}  // namespace tessera::optim
