#include "tessera/layers/connection_mask.hpp"

#include <algorithm>
#include <tuple>
#include <string>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::layers {

ConnectionMask ConnectionMask::random(int64_t outputs, int64_t inputs, int64_t fan_in, uint64_t seed,
                                      uint64_t stream) {
  if (outputs < 1 || inputs < 1 || fan_in < 1 || fan_in > inputs)
    throw Error("connection mask: " + std::to_string(fan_in) + " connections per output do not fit " +
                std::to_string(inputs) + " inputs");
  ConnectionMask m;
  m.outputs_ = outputs;
  m.inputs_ = inputs;
  m.fan_in_ = fan_in;
  m.values_.assign(static_cast<size_t>(outputs * inputs), 0.0f);
  std::vector<std::pair<uint64_t, int64_t>> draws(static_cast<size_t>(inputs));
  for (int64_t h = 0; h < outputs; ++h) {
    for (int64_t g = 0; g < inputs; ++g)
      draws[static_cast<size_t>(g)] = {rng::bits(seed, stream, static_cast<uint64_t>(h * inputs + g)), g};
    std::partial_sort(draws.begin(), draws.begin() + fan_in, draws.end());
    for (int64_t k = 0; k < fan_in; ++k) m.values_[m.index(h, draws[static_cast<size_t>(k)].second)] = 1.0f;
  }
  return m;
}

ConnectionMask ConnectionMask::of(int64_t outputs, int64_t inputs, std::vector<float> values) {
  if (static_cast<int64_t>(values.size()) != outputs * inputs)
    throw Error("connection mask: " + std::to_string(values.size()) + " values for " + std::to_string(outputs) + "x" +
                std::to_string(inputs) + " hypercolumns");
  ConnectionMask m;
  m.outputs_ = outputs;
  m.inputs_ = inputs;
  m.values_ = std::move(values);
  for (int64_t h = 0; h < outputs; ++h) {
    int64_t count = 0;
    for (int64_t g = 0; g < inputs; ++g) {
      const float v = m.values_[m.index(h, g)];
      if (v != 0.0f && v != 1.0f)
        throw Error("connection mask: entry (" + std::to_string(h) + ", " + std::to_string(g) + ") is " +
                    std::to_string(v) + ", not 0 or 1");
      count += v != 0.0f ? 1 : 0;
    }
    if (h == 0) m.fan_in_ = count;
    if (count != m.fan_in_)
      throw Error("connection mask: output hypercolumn " + std::to_string(h) + " reads " + std::to_string(count) +
                  " inputs, output 0 reads " + std::to_string(m.fan_in_));
  }
  return m;
}

std::vector<int64_t> ConnectionMask::fan_outs() const {
  std::vector<int64_t> counts(static_cast<size_t>(inputs_), 0);
  for (int64_t h = 0; h < outputs_; ++h)
    for (int64_t g = 0; g < inputs_; ++g) counts[static_cast<size_t>(g)] += connected(h, g) ? 1 : 0;
  return counts;
}

int64_t ConnectionMask::rewire(const std::vector<float>& mutual_information, int64_t swaps) {
  if (static_cast<int64_t>(mutual_information.size()) != outputs_ * inputs_)
    throw Error("connection mask: " + std::to_string(mutual_information.size()) +
                " mutual information values for " + std::to_string(outputs_) + "x" + std::to_string(inputs_) +
                " hypercolumns");
  std::vector<int64_t> fan_out = fan_outs();
  int64_t made = 0;
  for (int64_t h = 0; h < outputs_; ++h) {
    // Other outputs' use of an input: this output's own connection does not count against it.
    const auto score = [&](int64_t g) {
      const int64_t others = fan_out[static_cast<size_t>(g)] - (connected(h, g) ? 1 : 0);
      return static_cast<double>(mutual_information[index(h, g)]) / static_cast<double>(1 + others);
    };
    for (int64_t s = 0; s < swaps; ++s) {
      int64_t weakest = -1, strongest = -1;
      double weakest_score = 0.0, strongest_score = 0.0;
      for (int64_t g = 0; g < inputs_; ++g) {
        const double v = score(g);
        if (connected(h, g) && (weakest < 0 || v < weakest_score)) std::tie(weakest, weakest_score) = std::pair{g, v};
        if (!connected(h, g) && (strongest < 0 || v > strongest_score))
          std::tie(strongest, strongest_score) = std::pair{g, v};
      }
      if (weakest < 0 || strongest < 0 || !(strongest_score > weakest_score)) break;
      values_[index(h, weakest)] = 0.0f;
      values_[index(h, strongest)] = 1.0f;
      --fan_out[static_cast<size_t>(weakest)];
      ++fan_out[static_cast<size_t>(strongest)];
      ++made;
    }
  }
  return made;
}

}  // namespace tessera::layers
