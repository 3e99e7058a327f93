#include "tessera/io/synthetic_fields.hpp"

#include <array>
#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::io {
namespace {
constexpr uint64_t kParameterStream = 0x7061726d73ull;     // "parms"
constexpr uint64_t kFieldNoiseStream = 0x6e6f697365ull;         // "noise"
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
/// Rows first_row.. of `dst` = the part `box` of rows rows(0..n-1) of `src`, whose rows are
/// whole samples of spatial size `size` with `channels` values per voxel (channels-last).
void gather_boxes(const Kokkos::View<const float**, Kokkos::LayoutRight, MemSpace>& src,
                  const Kokkos::View<const int64_t*, MemSpace>& rows, int64_t n, const std::array<int64_t, 3>& size,
                  int64_t channels, const parallel::Box& box, const DeviceView<float>& dst, int64_t first_row) {
  const int64_t bd = box.extent[0], bh = box.extent[1], bw = box.extent[2];
  const int64_t od = box.offset[0], oh = box.offset[1], ow = box.offset[2];
  const int64_t sh = size[1], sw = size[2], c = channels, box_values = box.volume() * channels;
  Kokkos::parallel_for(
      "tessera::synthetic_gather_box", MDPolicy<3>({0, 0, 0}, {n, bd * bh, bw * c}),
      KOKKOS_LAMBDA(const int64_t r, const int64_t dh, const int64_t wc) {
        const int64_t d = dh / bh, h = dh % bh;
        dst((first_row + r) * box_values + dh * bw * c + wc) =
            src(rows(r), (((d + od) * sh + (h + oh)) * sw + ow) * c + wc);
      });
}
/// Normalised 1D Gaussian weights of width `sigma` over [−radius, radius], into `weights`;
/// returns Σ w². The separable 3D blur of unit white noise then has variance (Σ w²)³, which
/// the caller divides out.
double gaussian_weights(double sigma, int radius, const Kokkos::View<float*, MemSpace>& weights) {
  std::vector<float> w(static_cast<size_t>(2 * radius + 1));
  double total = 0.0, total_sq = 0.0;
  for (int k = -radius; k <= radius; ++k) total += std::exp(-0.5 * k * k / (sigma * sigma));
  for (int k = -radius; k <= radius; ++k) {
    const double v = std::exp(-0.5 * k * k / (sigma * sigma)) / total;
    w[static_cast<size_t>(k + radius)] = static_cast<float>(v);
    total_sq += v * v;
  }
  Kokkos::deep_copy(Kokkos::subview(weights, std::make_pair<size_t, size_t>(0, w.size())),
                    Kokkos::View<const float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(w.data(), w.size()));
  return total_sq;
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
  whole_inputs_ =
      Tensor(Shape{1, options_.size, options_.size, options_.size, options_.channels}, "tessera::synthetic_sample");
  whole_targets_ = Tensor(Shape{1, target_shape().numel()}, "tessera::synthetic_sample_targets");
  first_row_ = Kokkos::View<int64_t*, MemSpace>("tessera::synthetic_first_row", 1);  // zero: row 0
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

void SyntheticFields::load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                           const Tensor& targets) {
  const int64_t s = options_.size, channels = options_.channels;
  const auto n = static_cast<int64_t>(indices.size());
  const bool voxel_targets = targets_per_voxel();
  const int64_t target_values = voxel_targets ? box.volume() : 4;
  check_load_arguments("synthetic_fields", {s, s, s}, box, n, inputs, channels, targets, target_values);
  for (const int64_t index : indices)
    if (index < 0 || index >= options_.samples)
      throw Error("synthetic_fields: sample index " + std::to_string(index) + " out of range [0, " +
                  std::to_string(options_.samples) + ")");
  // Inputs are S³ voxels of C channels; targets either 4 values (a 1×1×1 "volume" of 4
  // channels, never cut) or one value per voxel (cut by the box like the inputs).
  const std::array<int64_t, 3> target_size =
      voxel_targets ? std::array<int64_t, 3>{s, s, s} : std::array<int64_t, 3>{1, 1, 1};
  const parallel::Box target_box = voxel_targets ? box : parallel::Box::whole({1, 1, 1});
  const int64_t target_channels = voxel_targets ? 1 : 4;
  const int64_t per_input = sample_shape().numel(), per_target = target_shape().numel();
  if (stored_inputs_.extent(0) == 0) {
    for (int64_t row = 0; row < n; ++row) {
      generate(indices[static_cast<size_t>(row)], 0, whole_inputs_, whole_targets_);
      gather_boxes(UnmanagedMatrix<float>(whole_inputs_.data(), 1, per_input), first_row_, 1, {s, s, s}, channels, box,
                   inputs.view(), row);
      gather_boxes(UnmanagedMatrix<float>(whole_targets_.data(), 1, per_target), first_row_, 1, target_size,
                   target_channels, target_box, targets.view(), row);
    }
    return;
  }
  // Generate what the store lacks, then gather the whole batch from the store.
  for (const int64_t index : indices) {
    if (stored_[static_cast<size_t>(index)]) continue;
    generate(index, 0, whole_inputs_, whole_targets_);
    Kokkos::deep_copy(Kokkos::subview(stored_inputs_, index, Kokkos::ALL), whole_inputs_.view());
    Kokkos::deep_copy(Kokkos::subview(stored_targets_, index, Kokkos::ALL), whole_targets_.view());
    stored_[static_cast<size_t>(index)] = 1;
  }
  if (rows_.extent(0) < indices.size())
    rows_ = Kokkos::View<int64_t*, MemSpace>("tessera::synthetic_rows", indices.size());
  Kokkos::deep_copy(
      Kokkos::subview(rows_, std::make_pair<size_t, size_t>(0, indices.size())),
      Kokkos::View<const int64_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(indices.data(), indices.size()));
  gather_boxes(stored_inputs_, rows_, n, {s, s, s}, channels, box, inputs.view(), 0);
  gather_boxes(stored_targets_, rows_, n, target_size, target_channels, target_box, targets.view(), 0);
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
  const double sigma = 1.0 + 0.5 * theta[1];
  const int radius = std::min(kMaxRadius, static_cast<int>(std::ceil(3.0 * sigma)));
  auto weights = weights_;
  const double total_sq = gaussian_weights(sigma, radius, weights);

  const uint64_t seed = options_.seed, global = options_.index_offset + static_cast<uint64_t>(index);
  Kokkos::parallel_for(
      "tessera::synthetic_noise", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t i) {
        noise(i) = rng::normal(seed, kFieldNoiseStream ^ global, static_cast<uint64_t>(i));
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

}  // namespace tessera::io
