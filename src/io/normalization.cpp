#include "tessera/io/normalization.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/json_reader.hpp"

namespace tessera::io {
namespace {

/// A number or a non-empty list of numbers at `key` of `obj` (the config reader has no list
/// of numbers), checked to be finite, and positive when `positive`.
std::vector<double> number_or_list(const nlohmann::json& obj, const std::string& path, const std::string& key,
                                   double fallback, bool positive) {
  if (!obj.contains(key)) return {fallback};
  const auto& raw = obj.at(key);
  const std::string where = path + "." + key;
  std::vector<double> values;
  if (raw.is_number()) {
    values.push_back(raw.get<double>());
  } else if (raw.is_array() && !raw.empty()) {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (!raw[i].is_number())
        throw ConfigError(where + "[" + std::to_string(i) + "]", "expected a number, got " + json_excerpt(raw[i]));
      values.push_back(raw[i].get<double>());
    }
  } else {
    throw ConfigError(where, "expected a number or a non-empty list of numbers, got " + json_excerpt(raw));
  }
  for (const double v : values)
    if (!std::isfinite(v) || (positive && v <= 0.0))
      throw ConfigError(where, std::string(positive ? "every value must be positive" : "every value must be finite") +
                                   ", got " + std::to_string(v));
  return values;
}

/// Groups of `period` values (`Period` when it is known at compile time, the common case of
/// 1, 2, 4, 8 or 16 channels, which lets the compiler vectorise the whole group).
template <class T, bool Log, int64_t Period>
int64_t convert_typed(const void* values, int64_t count, const DeviceCoefficients& coefficients,
                      const DeviceView<float>& out, int64_t first) {
  const Kokkos::View<const T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> in(static_cast<const T*>(values),
                                                                                     count);
  const auto k = coefficients.scale_shift;
  const int64_t period = Period > 0 ? Period : coefficients.period;
  const int64_t whole = count / period;
  int64_t bad = 0;
  Kokkos::parallel_reduce(
      "tessera::convert_stored_values", RangePolicy(0, whole + (count % period ? 1 : 0)),
      KOKKOS_LAMBDA(const int64_t group, int64_t& n_bad) {
        const int64_t base = group * period;
        int local = 0;
        if (group < whole) {
          for (int64_t j = 0; j < (Period > 0 ? Period : period); ++j) {
            const float x = static_cast<float>(in(base + j));
            const float y = (Log ? ::log1pf(x) : x) * k(j) + k(period + j);
            out(first + base + j) = y;
            const float z = y - y;  // NaN exactly when y is NaN or ±Inf
            local += z != z;
          }
        } else {
          for (int64_t j = 0; base + j < count; ++j) {
            const float x = static_cast<float>(in(base + j));
            const float y = (Log ? ::log1pf(x) : x) * k(j) + k(period + j);
            out(first + base + j) = y;
            const float z = y - y;
            local += z != z;
          }
        }
        n_bad += local;
      },
      bad);
  return bad;
}

template <class T, bool Log, int64_t Period>
int64_t convert_on_host(const T* in, int64_t count, const float* k, int64_t runtime_period, float* out) {
  const int64_t period = Period > 0 ? Period : runtime_period;
  const int64_t whole = count / period * period;
  int bad = 0;  // flagged without a branch, so the loop vectorises; searched only when set
  for (int64_t base = 0; base < whole; base += period)
    for (int64_t j = 0; j < (Period > 0 ? Period : period); ++j) {
      const float x = static_cast<float>(in[base + j]);
      const float y = (Log ? ::log1pf(x) : x) * k[j] + k[period + j];
      out[base + j] = y;
      const float z = y - y;
      bad |= z != z;
    }
  for (int64_t j = 0; whole + j < count; ++j) {
    const float x = static_cast<float>(in[whole + j]);
    const float y = (Log ? ::log1pf(x) : x) * k[j] + k[period + j];
    out[whole + j] = y;
    const float z = y - y;
    bad |= z != z;
  }
  if (!bad) return -1;
  for (int64_t i = 0; i < count; ++i) {
    const float z = out[i] - out[i];
    if (z != z) return i;
  }
  return -1;
}

template <class T>
int64_t on_host_as(const void* values, int64_t count, Normalization::Transform transform,
                   const DeviceCoefficients& coefficients, float* out) {
  const auto* in = static_cast<const T*>(values);
  const float* k = coefficients.host.data();
  const bool log = transform == Normalization::Transform::log1p;
  if (coefficients.period == 16)
    return log ? convert_on_host<T, true, 16>(in, count, k, 16, out)
               : convert_on_host<T, false, 16>(in, count, k, 16, out);
  return log ? convert_on_host<T, true, 0>(in, count, k, coefficients.period, out)
             : convert_on_host<T, false, 0>(in, count, k, coefficients.period, out);
}

template <class T>
int64_t convert_as(const void* values, int64_t count, Normalization::Transform transform,
                   const DeviceCoefficients& coefficients, const DeviceView<float>& out, int64_t first) {
  const bool log = transform == Normalization::Transform::log1p;
  if (coefficients.period == 16)
    return log ? convert_typed<T, true, 16>(values, count, coefficients, out, first)
               : convert_typed<T, false, 16>(values, count, coefficients, out, first);
  return log ? convert_typed<T, true, 0>(values, count, coefficients, out, first)
             : convert_typed<T, false, 0>(values, count, coefficients, out, first);
}

}  // namespace

Normalization Normalization::from_json(const ConfigObject& cfg) {
  Normalization n;
  n.mean = number_or_list(cfg.raw(), cfg.path(), "mean", 0.0, false);
  n.std = number_or_list(cfg.raw(), cfg.path(), "std", 1.0, true);
  nlohmann::json rest = cfg.raw();
  rest.erase("mean");
  rest.erase("std");
  ConfigObject others(rest, cfg.path());
  n.transform = others.choice("transform", {"none", "log1p"}, "none") == "log1p" ? Transform::log1p : Transform::none;
  others.finish();
  return n;
}

std::vector<float> Normalization::coefficients(int64_t channels, const std::string& where) const {
  for (const auto* list : {&mean, &std})
    if (list->size() != 1 && static_cast<int64_t>(list->size()) != channels)
      throw ConfigError(where + (list == &mean ? ".mean" : ".std"),
                        "has " + std::to_string(list->size()) +
                            " values; give one for all channels or one per channel (" + std::to_string(channels) + ")");
  std::vector<float> k(static_cast<size_t>(2 * channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double m = mean.size() == 1 ? mean[0] : mean[static_cast<size_t>(c)];
    const double s = std.size() == 1 ? std[0] : std[static_cast<size_t>(c)];
    k[static_cast<size_t>(2 * c)] = static_cast<float>(1.0 / s);
    k[static_cast<size_t>(2 * c + 1)] = static_cast<float>(-m / s);
  }
  return k;
}

std::string Normalization::str() const {
  auto list = [](const std::vector<double>& v) {
    std::string s = v.size() == 1 ? "" : "[";
    for (size_t i = 0; i < v.size(); ++i) s += format("%s%g", i ? ", " : "", v[i]);
    return v.size() == 1 ? s : s + "]";
  };
  return std::string(transform == Transform::log1p ? "log1p" : "none") + ", mean " + list(mean) + ", std " + list(std);
}

DeviceCoefficients DeviceCoefficients::of(const std::vector<float>& per_channel) {
  const auto channels = static_cast<int64_t>(per_channel.size() / 2);
  DeviceCoefficients d;
  d.period = channels * ((16 + channels - 1) / channels);
  std::vector<float> host(static_cast<size_t>(2 * d.period));
  for (int64_t j = 0; j < d.period; ++j) {
    host[static_cast<size_t>(j)] = per_channel[static_cast<size_t>(2 * (j % channels))];
    host[static_cast<size_t>(d.period + j)] = per_channel[static_cast<size_t>(2 * (j % channels) + 1)];
  }
  d.scale_shift = Kokkos::View<float*, MemSpace>("tessera::normalization", host.size());
  Kokkos::deep_copy(d.scale_shift, Kokkos::View<const float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                       host.data(), host.size()));
  d.host = std::move(host);
  return d;
}

int64_t convert_values(const void* values, ElementType type, int64_t count, Normalization::Transform transform,
                       const DeviceCoefficients& coefficients, const DeviceView<float>& out, int64_t first) {
  switch (type) {
    case ElementType::uint8: return convert_as<uint8_t>(values, count, transform, coefficients, out, first);
    case ElementType::int16: return convert_as<int16_t>(values, count, transform, coefficients, out, first);
    case ElementType::int32: return convert_as<int32_t>(values, count, transform, coefficients, out, first);
    case ElementType::float32: return convert_as<float>(values, count, transform, coefficients, out, first);
  }
  return 0;
}

int64_t convert_values_on_host(const void* values, ElementType type, int64_t count, Normalization::Transform transform,
                               const DeviceCoefficients& coefficients, float* out) {
  switch (type) {
    case ElementType::uint8: return on_host_as<uint8_t>(values, count, transform, coefficients, out);
    case ElementType::int16: return on_host_as<int16_t>(values, count, transform, coefficients, out);
    case ElementType::int32: return on_host_as<int32_t>(values, count, transform, coefficients, out);
    case ElementType::float32: return on_host_as<float>(values, count, transform, coefficients, out);
  }
  return -1;
}

Normalization Normalization::of_run_config(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("data") || !config.at("data").is_object() ||
      !config.at("data").contains("normalize"))
    return {};
  return from_json(ConfigObject(config.at("data").at("normalize"), "$.data.normalize"));
}

std::vector<float> normalize_on_host(const std::vector<double>& values, int64_t channels, const Normalization& n,
                                     const std::string& where, const std::string& what) {
  const DeviceCoefficients coefficients = DeviceCoefficients::of(n.coefficients(channels, where));
  const std::vector<float> stored(values.begin(), values.end());
  std::vector<float> out(values.size());
  const int64_t bad = convert_values_on_host(stored.data(), ElementType::float32, static_cast<int64_t>(stored.size()),
                                             n.transform, coefficients, out.data());
  if (bad >= 0)
    throw IoError(what + format(": value %g at index %lld is not finite once normalised (%s)",
                                values[static_cast<size_t>(bad)], static_cast<long long>(bad), n.str().c_str()));
  return out;
}

}  // namespace tessera::io
