#include "tessera/io/cosmoflow_samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"

namespace tessera::io {

CosmoFlowSamples::CosmoFlowSamples(const Options& options)
    : options_(options),
      fields_(options.fields),
      volume_(options.fields.size * options.fields.size * options.fields.size),
      // Every stride-th voxel is enough for the moments.
      stride_(std::max<int64_t>(1, volume_ >> 18)),
      moments_(static_cast<size_t>(2 * options.fields.channels + 2), 0.0) {}

SampleSchema CosmoFlowSamples::schema() const {
  const int64_t s = options_.fields.size;
  SampleSchema schema;
  schema.input = Shape{s, s, s, options_.fields.channels};
  schema.input_type = options_.type;
  schema.target = Shape{4};
  schema.target_type = ElementType::float32;
  return schema;
}

void CosmoFlowSamples::generate(int64_t index, const SampleBuffers& out) {
  void* inputs = out.inputs;
  moments_.back() += static_cast<double>(fields_.stored_values(index, options_.type, options_.mean_count, inputs));
  require_information(inputs, index);
  const auto theta = fields_.parameters(index);
  std::memcpy(out.targets, theta.data(), sizeof theta);
  measure(inputs);
}

std::vector<std::pair<std::string, std::string>> CosmoFlowSamples::attributes() const {
  const auto& f = options_.fields;
  return {{"generator", "tessera datagen cosmoflow --size " + std::to_string(f.size) + " --channels " +
                            std::to_string(f.channels) + " --seed " + std::to_string(f.seed) + " --dtype " +
                            element_type_name(options_.type) + " --mean-count " + format("%g", options_.mean_count)},
          {"targets",
           "theta0 amplitude, theta1 spectral index, theta2 turnover, theta3 growth; "
           "each uniform in [-1, 1]"}};
}

CosmoFlowSamples::Statistics CosmoFlowSamples::statistics(const parallel::Communicator& comm) const {
  auto moments = moments_;
  comm.allreduce_sum(moments.data(), static_cast<int64_t>(moments.size()));
  const int64_t channels = options_.fields.channels;
  const double n = moments[static_cast<size_t>(2 * channels)];
  Statistics s;
  for (int64_t c = 0; c < channels; ++c) {
    const double m = moments[static_cast<size_t>(c)] / n;
    s.mean.push_back(m);
    s.std.push_back(std::sqrt(std::max(moments[static_cast<size_t>(channels + c)] / n - m * m, 1e-12)));
  }
  s.clipped = moments.back();
  return s;
}

double CosmoFlowSamples::stored_value(const void* stored, size_t at) const {
  switch (options_.type) {
    case ElementType::uint8: return static_cast<double>(static_cast<const uint8_t*>(stored)[at]);
    case ElementType::int16: return static_cast<double>(static_cast<const int16_t*>(stored)[at]);
    default: return static_cast<double>(static_cast<const float*>(stored)[at]);
  }
}

void CosmoFlowSamples::require_information(const void* stored, int64_t index) const {
  const int64_t channels = options_.fields.channels;
  for (int64_t c = 0; c < channels; ++c) {
    const double first = stored_value(stored, static_cast<size_t>(c));
    bool varies = false;
    for (int64_t v = 1; v < volume_ && !varies; ++v)
      varies = stored_value(stored, static_cast<size_t>(v * channels + c)) != first;
    if (varies) continue;
    throw ConfigError("--mean-count",
                      format("%g gives sample %lld a channel %lld whose every voxel holds %g particles, which carries "
                             "no signal",
                             options_.mean_count, static_cast<long long>(index), static_cast<long long>(c), first) +
                          (first == 0.0 ? " (too few particles per voxel: raise --mean-count)"
                                        : " (the " + element_type_name(options_.type) +
                                              " maximum: lower --mean-count or use a wider --dtype)"));
  }
}

void CosmoFlowSamples::measure(const void* stored) {
  const int64_t channels = options_.fields.channels;
  for (int64_t v = 0; v < volume_; v += stride_)
    for (int64_t c = 0; c < channels; ++c) {
      const double value = stored_value(stored, static_cast<size_t>(v * channels + c));
      const double x = counts() ? std::log1p(value) : value;
      moments_[static_cast<size_t>(c)] += x;
      moments_[static_cast<size_t>(channels + c)] += x * x;
    }
  moments_[static_cast<size_t>(2 * channels)] += static_cast<double>((volume_ + stride_ - 1) / stride_);
}

}  // namespace tessera::io
