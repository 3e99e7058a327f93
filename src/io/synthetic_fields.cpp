#include "tessera/io/synthetic_fields.hpp"

#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::io {
namespace {
constexpr uint64_t kParameterStream = 0x7061726d73ull;     // "parms"
constexpr uint64_t kNoiseStream = 0x6e6f697365ull;         // "noise"
constexpr uint64_t kChannelNoiseStream = 0x63686e6f69ull;  // "chnoi"
constexpr int kMaxRadius = 12;

/// One pass of a periodic 1D Gaussian blur along axis `axis` of an S³ volume.
void blur_axis(const DeviceView<float>& in, const DeviceView<float>& out, int64_t s, int axis,
               const Kokkos::View<float*, MemSpace>& weights, int radius) {
  Kokkos::parallel_for(
      "tessera::synthetic_blur", MDPolicy<3>({0, 0, 0}, {s, s, s}),
      KOKKOS_LAMBDA(const int64_t d, const int64_t h, const int64_t w) {
        float acc = 0.0f;
        for (int k = -radius; k <= radius; ++k) {
          int64_t dd = d, hh = h, ww = w;
          int64_t& moved = axis == 0 ? dd : (axis == 1 ? hh : ww);
          moved = ((moved + k) % s + s) % s;
          acc += weights(k + radius) * in((dd * s + hh) * s + ww);
        }
        out((d * s + h) * s + w) = acc;
      });
}
}  // namespace

SyntheticFields::SyntheticFields(const Options& options) : options_(options) {
  if (options_.samples < 1) throw Error("synthetic_fields: samples must be at least 1");
  if (options_.size < 4) throw Error("synthetic_fields: size must be at least 4 voxels");
  if (options_.channels < 1) throw Error("synthetic_fields: channels must be at least 1");
  const int64_t volume = options_.size * options_.size * options_.size;
  noise_ = Tensor(Shape{volume}, "tessera::synthetic_noise");
  smoothed_ = Tensor(Shape{volume}, "tessera::synthetic_smoothed");
  tmp_ = Tensor(Shape{volume}, "tessera::synthetic_tmp");
  weights_ = Kokkos::View<float*, MemSpace>("tessera::synthetic_weights", 2 * kMaxRadius + 1);
  const int64_t per_sample = sample_shape().numel() + target_shape().numel();
  if (options_.store_mb > 0 && options_.samples * per_sample * 4 <= options_.store_mb * (int64_t{1} << 20)) {
    stored_inputs_ = decltype(stored_inputs_)("tessera::synthetic_store", options_.samples, sample_shape().numel());
    stored_targets_ =
        decltype(stored_targets_)("tessera::synthetic_store_targets", options_.samples, target_shape().numel());
    stored_.assign(static_cast<size_t>(options_.samples), 0);
  }
}

std::string SyntheticFields::describe() const {
  return "synthetic_fields: " + std::to_string(options_.samples) + " samples of " + std::to_string(options_.channels) +
         "×" + std::to_string(options_.size) + "³, " +
         (options_.task == Task::regression ? "4 regression targets" : "2-class segmentation per voxel");
}

std::array<float, 4> SyntheticFields::parameters(int64_t index) const {
  std::array<float, 4> theta{};
  const uint64_t global = options_.index_offset + static_cast<uint64_t>(index);
  for (uint64_t k = 0; k < 4; ++k)
    theta[k] = 2.0f * rng::uniform(options_.seed, kParameterStream, global * 4 + k) - 1.0f;
  return theta;
}

void SyntheticFields::load(const std::vector<int64_t>& indices, const Tensor& inputs, const Tensor& targets) {
  const int64_t per_input = sample_shape().numel(), per_target = target_shape().numel();
  const auto n = static_cast<int64_t>(indices.size());
  require_shape(inputs.numel() >= n * per_input && targets.numel() >= n * per_target,
                "synthetic_fields: batch tensors too small for " + std::to_string(n) + " samples");
  for (const int64_t index : indices)
    if (index < 0 || index >= options_.samples)
      throw Error("synthetic_fields: sample index " + std::to_string(index) + " out of range [0, " +
                  std::to_string(options_.samples) + ")");
  if (stored_inputs_.extent(0) == 0) {
    for (int64_t row = 0; row < n; ++row) generate(indices[static_cast<size_t>(row)], row, inputs, targets);
    return;
  }
  // Generate what the store lacks, through row 0 of the batch, then gather the whole batch.
  for (const int64_t index : indices) {
    if (stored_[static_cast<size_t>(index)]) continue;
    generate(index, 0, inputs, targets);
    Kokkos::deep_copy(Kokkos::subview(stored_inputs_, index, Kokkos::ALL),
                      Kokkos::subview(inputs.view(), std::make_pair(int64_t{0}, per_input)));
    Kokkos::deep_copy(Kokkos::subview(stored_targets_, index, Kokkos::ALL),
                      Kokkos::subview(targets.view(), std::make_pair(int64_t{0}, per_target)));
    stored_[static_cast<size_t>(index)] = 1;
  }
  if (rows_.extent(0) < indices.size())
    rows_ = Kokkos::View<int64_t*, MemSpace>("tessera::synthetic_rows", indices.size());
  auto rows = rows_;
  Kokkos::deep_copy(
      Kokkos::subview(rows, std::make_pair<size_t, size_t>(0, indices.size())),
      Kokkos::View<const int64_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(indices.data(), indices.size()));
  auto x = inputs.view(), t = targets.view();
  auto si = stored_inputs_, st = stored_targets_;
  Kokkos::parallel_for(
      "tessera::synthetic_gather", MDPolicy<2>({0, 0}, {n, per_input}),
      KOKKOS_LAMBDA(const int64_t r, const int64_t i) { x(r * per_input + i) = si(rows(r), i); });
  Kokkos::parallel_for(
      "tessera::synthetic_gather_targets", MDPolicy<2>({0, 0}, {n, per_target}),
      KOKKOS_LAMBDA(const int64_t r, const int64_t i) { t(r * per_target + i) = st(rows(r), i); });
}

void SyntheticFields::generate(int64_t index, int64_t row_index, const Tensor& inputs, const Tensor& targets) {
  const int64_t s = options_.size, c_count = options_.channels, volume = s * s * s;
  const bool segmentation = options_.task == Task::segmentation;
  auto labels = targets.view();
  auto x = inputs.view();
  auto noise = noise_.view(), smoothed = smoothed_.view(), tmp = tmp_.view();
  const size_t row = static_cast<size_t>(row_index);
  const auto theta = parameters(index);
  if (!segmentation) {
    std::vector<float> host_targets(theta.begin(), theta.end());
    Kokkos::deep_copy(Kokkos::subview(labels, std::make_pair<int64_t, int64_t>(row_index * 4, row_index * 4 + 4)),
                      Kokkos::View<const float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          host_targets.data(), host_targets.size()));
  }
  // Normalised 1D Gaussian weights; the separable 3D blur of unit white noise then has
  // variance (Σ w²)³, which we divide out.
  const double sigma = 1.0 + 0.5 * theta[1];
  const int radius = std::min(kMaxRadius, static_cast<int>(std::ceil(3.0 * sigma)));
  std::vector<float> w(static_cast<size_t>(2 * radius + 1));
  double total = 0.0, total_sq = 0.0;
  for (int k = -radius; k <= radius; ++k) total += std::exp(-0.5 * k * k / (sigma * sigma));
  for (int k = -radius; k <= radius; ++k) {
    const double v = std::exp(-0.5 * k * k / (sigma * sigma)) / total;
    w[static_cast<size_t>(k + radius)] = static_cast<float>(v);
    total_sq += v * v;
  }
  auto weights = weights_;
  Kokkos::deep_copy(Kokkos::subview(weights, std::make_pair<size_t, size_t>(0, w.size())),
                    Kokkos::View<const float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(w.data(), w.size()));

  const uint64_t seed = options_.seed, global = options_.index_offset + static_cast<uint64_t>(index);
  Kokkos::parallel_for(
      "tessera::synthetic_noise", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t i) {
        noise(i) = rng::normal(seed, kNoiseStream ^ global, static_cast<uint64_t>(i));
      });
  blur_axis(noise, tmp, s, 0, weights, radius);
  blur_axis(tmp, noise, s, 1, weights, radius);
  blur_axis(noise, smoothed, s, 2, weights, radius);

  const float norm = static_cast<float>(1.0 / std::sqrt(std::pow(total_sq, 3.0)));
  const int64_t base = static_cast<int64_t>(row) * volume * c_count;
  if (segmentation) {
    const int64_t label_base = static_cast<int64_t>(row) * volume;
    Kokkos::parallel_for(
        "tessera::synthetic_segmentation", MDPolicy<2>({0, 0}, {volume, c_count}),
        KOKKOS_LAMBDA(const int64_t i, const int64_t c) {
          const float field = norm * smoothed(i);
          x(base + i * c_count + c) =
              field + rng::normal(seed, kChannelNoiseStream ^ global, static_cast<uint64_t>(i * c_count + c));
          if (c == 0) labels(label_base + i) = field > 0.0f ? 1.0f : 0.0f;
        });
    return;
  }
  const float amplitude = std::exp(0.5f * theta[0]), offset = theta[2], growth = theta[3];
  const float centre = 0.5f * static_cast<float>(c_count - 1);
  Kokkos::parallel_for(
      "tessera::synthetic_channels", MDPolicy<2>({0, 0}, {volume, c_count}),
      KOKKOS_LAMBDA(const int64_t i, const int64_t c) {
        const float scale = amplitude * math::exp(0.4f * growth * (static_cast<float>(c) - centre));
        x(base + i * c_count + c) = offset + scale * norm * smoothed(i);
      });
}

DataSplit make_datasets(ConfigObject& cfg, uint64_t seed) {
  const std::string source = cfg.choice("source", {"synthetic_fields"}, "synthetic_fields");
  DataSplit split;
  if (source == "synthetic_fields") {
    SyntheticFields::Options o;
    o.task = cfg.choice("task", {"regression", "segmentation"}, "regression") == "regression"
                 ? SyntheticFields::Task::regression
                 : SyntheticFields::Task::segmentation;
    o.samples = cfg.integer_in("samples", 1, int64_t{1} << 40, 512);
    o.size = cfg.integer_in("size", 4, 4096, 16);
    o.channels = cfg.integer_in("channels", 1, 1024, 4);
    o.seed = static_cast<uint64_t>(cfg.integer_in("seed", 0, int64_t{1} << 62, static_cast<int64_t>(seed)));
    o.store_mb = cfg.integer_in("store_mb", 0, int64_t{1} << 30, 1024);
    const int64_t validation = cfg.integer_in("validation_samples", 0, int64_t{1} << 40, 64);
    split.train = std::make_unique<SyntheticFields>(o);
    if (validation > 0) {
      o.index_offset = static_cast<uint64_t>(o.samples);
      o.samples = validation;
      split.validation = std::make_unique<SyntheticFields>(o);
    }
  }
  cfg.finish();
  return split;
}

}  // namespace tessera::io
