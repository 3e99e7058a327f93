#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/io/sample_schema.hpp"

namespace tessera::io {

/// How stored input values become the floats a model sees (docs/data.md):
///   y = (t(x) − mean[c]) / std[c],
/// with t the identity or log1p (log(1 + x), CosmoFlow's transform of particle counts) and one
/// mean and std for all channels or one per channel c.
struct Normalization {
  enum class Transform { none, log1p };
  Transform transform = Transform::none;
  std::vector<double> mean{0.0}, std{1.0};

  /// Reads {"transform": "none" | "log1p", "mean": number | [numbers], "std": number | [numbers]}
  /// and rejects other keys (errors name the JSON path).
  static Normalization from_json(const ConfigObject& cfg);
  /// The normalisation of a run config's data section ("data.normalize"; none without one),
  /// for tools that read samples outside a dataset (`tessera predict`, `tessera ffn segment`).
  static Normalization of_run_config(const nlohmann::json& config);
  /// Per channel, the scale 1/std followed by the shift −mean/std (2·channels floats). Throws
  /// ConfigError at `where` when mean or std has neither 1 nor `channels` entries.
  std::vector<float> coefficients(int64_t channels, const std::string& where) const;
  /// "log1p, mean 3.2, std 0.55"
  std::string str() const;
};

/// The normalisation of Normalization::coefficients laid out for the device: per-value scales
/// and shifts over a period of whole voxels at least 16 values long (`period` = channels ·
/// ⌈16 / channels⌉), so the conversion loop is one vectorisable multiply-add per value.
struct DeviceCoefficients {
  Kokkos::View<float*, MemSpace> scale_shift;  // scale[0..period), then shift[0..period)
  std::vector<float> host;                     // the same, for convert_values_on_host
  int64_t period = 0;

  static DeviceCoefficients of(const std::vector<float>& per_channel);
};

/// Converts `count` stored values of `type` at `values` — memory the default execution space
/// can read — into floats at out[first ...], channels-last, with y = t(x)·scale[c] + shift[c].
/// Returns how many results are not finite (NaN or ±Inf in the file, or log1p of a value
/// ≤ −1), so a caller can refuse them instead of training on them.
int64_t convert_values(const void* values, ElementType type, int64_t count, Normalization::Transform transform,
                       const DeviceCoefficients& coefficients, const DeviceView<float>& out, int64_t first);

/// The same conversion by the calling thread alone, from and to host memory, with the same
/// float arithmetic — for a background thread, which must not launch Kokkos kernels. Returns
/// the index of the first value that is not finite, or −1.
int64_t convert_values_on_host(const void* values, ElementType type, int64_t count, Normalization::Transform transform,
                               const DeviceCoefficients& coefficients, float* out);

/// One whole sample's values as read from a file (doubles, e.g. io::SampleArray's; channels-last,
/// `channels` per voxel) normalised on the host exactly as training reads them: their float32
/// values through convert_values_on_host. ConfigError at `where` when the means or stds do not fit
/// the channels; IoError naming `what` for a value that is or becomes not finite.
std::vector<float> normalize_on_host(const std::vector<double>& values, int64_t channels, const Normalization& n,
                                     const std::string& where, const std::string& what);

}  // namespace tessera::io
