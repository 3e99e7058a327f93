#include "tessera/io/cell_volumes.hpp"

#include <cmath>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::io {
namespace {
constexpr uint64_t kSeedStream = 0x63656c6c73ull;   // "cells"
constexpr uint64_t kTextureStream = 0x74657874ull;  // "text"
constexpr uint64_t kOrganelleStream = 0x6f7267ull;  // "org"
constexpr uint64_t kCellNoiseStream = 0x636e6f6973ull;  // "cnois"
constexpr int kSearch = 2;  // grid cells searched each way: covers the seeds' jitter and weights
constexpr int kBlurRadius = 2;
constexpr float kBlurSigma = 0.8f;  // voxels

using Seeds = Kokkos::View<float**, Kokkos::LayoutRight, MemSpace>;

/// Smooth random values in [0, 1] with features about `pitch` voxels apart: uniform values on
/// a lattice, interpolated with a smoothstep so the texture has no grid creases.
KOKKOS_INLINE_FUNCTION float value_noise(uint64_t seed, uint64_t stream, float d, float h, float w, float pitch) {
  const float x[3] = {d / pitch, h / pitch, w / pitch};
  int64_t base[3];
  float t[3];
  for (int k = 0; k < 3; ++k) {
    base[k] = static_cast<int64_t>(x[k]);
    const float f = x[k] - static_cast<float>(base[k]);
    t[k] = f * f * (3.0f - 2.0f * f);
  }
  float sum = 0.0f;
  for (int corner = 0; corner < 8; ++corner) {
    const int64_t i = base[0] + ((corner >> 2) & 1), j = base[1] + ((corner >> 1) & 1), k = base[2] + (corner & 1);
    const float weight = (((corner >> 2) & 1) ? t[0] : 1.0f - t[0]) * (((corner >> 1) & 1) ? t[1] : 1.0f - t[1]) *
                         ((corner & 1) ? t[2] : 1.0f - t[2]);
    sum += weight * rng::uniform(seed, stream, static_cast<uint64_t>((i * 4096 + j) * 4096 + k));
  }
  return sum;
}

KOKKOS_INLINE_FUNCTION float smoothstep(float lo, float hi, float x) {
  const float t = math::min(1.0f, math::max(0.0f, (x - lo) / (hi - lo)));
  return t * t * (3.0f - 2.0f * t);
}

/// Per voxel: the owning cell (least power distance |p − s|² − weight) and the distance to
/// that cell's boundary, the least distance to the bisecting plane between it and any other
/// seed (exact for the convex cells of a power diagram); then the clean intensity and label, and
/// the cell's id (its seed's index + 1; 0 on membrane) where `instances` is allocated.
void render(const Seeds& seeds, int64_t s, int64_t grid, float pitch, float membrane, uint64_t seed, uint64_t index,
            const DeviceView<float>& intensity, const DeviceView<uint8_t>& labels,
            const CellVolumes::InstanceView& instances) {
  const bool with_instances = instances.extent(0) > 0;
  const uint64_t texture_stream = kTextureStream ^ (index << 20), organelle_stream = kOrganelleStream ^ (index << 20);
  Kokkos::parallel_for(
      "tessera::cell_render", MDPolicy<3>({0, 0, 0}, {s, s, s}),
      KOKKOS_LAMBDA(const int64_t d, const int64_t h, const int64_t w) {
        const float p[3] = {static_cast<float>(d) + 0.5f, static_cast<float>(h) + 0.5f, static_cast<float>(w) + 0.5f};
        int64_t cell[3];
        for (int k = 0; k < 3; ++k) cell[k] = static_cast<int64_t>(p[k] / pitch);
        auto power = [&](int64_t g) {
          float sum = 0.0f;
          for (int k = 0; k < 3; ++k) sum += (p[k] - seeds(g, k)) * (p[k] - seeds(g, k));
          return sum - seeds(g, 3);
        };
        int64_t owner = -1;
        float best = 0.0f;
        for (int64_t a = cell[0] - kSearch; a <= cell[0] + kSearch; ++a)
          for (int64_t b = cell[1] - kSearch; b <= cell[1] + kSearch; ++b)
            for (int64_t c = cell[2] - kSearch; c <= cell[2] + kSearch; ++c) {
              if (a < 0 || b < 0 || c < 0 || a >= grid || b >= grid || c >= grid) continue;
              const int64_t g = (a * grid + b) * grid + c;
              const float pd = power(g);
              if (owner < 0 || pd < best) owner = g, best = pd;
            }
        float boundary = 1e30f;
        for (int64_t a = cell[0] - kSearch; a <= cell[0] + kSearch; ++a)
          for (int64_t b = cell[1] - kSearch; b <= cell[1] + kSearch; ++b)
            for (int64_t c = cell[2] - kSearch; c <= cell[2] + kSearch; ++c) {
              if (a < 0 || b < 0 || c < 0 || a >= grid || b >= grid || c >= grid) continue;
              const int64_t g = (a * grid + b) * grid + c;
              if (g == owner) continue;
              float separation = 0.0f;
              for (int k = 0; k < 3; ++k)
                separation += (seeds(g, k) - seeds(owner, k)) * (seeds(g, k) - seeds(owner, k));
              boundary = math::min(boundary, (power(g) - best) / (2.0f * math::sqrt(math::max(separation, 1e-12f))));
            }
        const int64_t v = (d * s + h) * s + w;
        const float texture = value_noise(seed, texture_stream, p[0], p[1], p[2], 2.5f) - 0.5f;
        const bool on_membrane = boundary < 0.5f * membrane;
        if (with_instances) instances(v) = on_membrane ? 0 : static_cast<int32_t>(owner + 1);
        if (on_membrane) {
          labels(v) = CellVolumes::kMembrane;
          intensity(v) = 0.12f + 0.06f * texture;
          return;
        }
        labels(v) = CellVolumes::kInterior;
        // Organelles: dark blobs kept a little away from the membrane, darker than cytoplasm
        // but lighter than membrane, so telling them apart takes their shape.
        const float blob = value_noise(seed, organelle_stream, p[0], p[1], p[2], 4.0f);
        const float organelle =
            smoothstep(0.74f, 0.84f, blob) * smoothstep(0.5f * membrane + 1.0f, 0.5f * membrane + 2.5f, boundary);
        intensity(v) = seeds(owner, 4) + 0.14f * texture - 0.32f * organelle;
      });
}

/// One pass of a Gaussian blur along `axis`, edges clamped (the volume is a cut-out of a
/// larger tissue, not periodic).
void blur_axis(const DeviceView<float>& in, const DeviceView<float>& out, int64_t s, int axis) {
  float weights[2 * kBlurRadius + 1];
  float total = 0.0f;
  for (int k = -kBlurRadius; k <= kBlurRadius; ++k)
    total += weights[k + kBlurRadius] = std::exp(-0.5f * static_cast<float>(k * k) / (kBlurSigma * kBlurSigma));
  const float w0 = weights[0] / total, w1 = weights[1] / total, w2 = weights[2] / total;
  Kokkos::parallel_for(
      "tessera::cell_blur", MDPolicy<3>({0, 0, 0}, {s, s, s}),
      KOKKOS_LAMBDA(const int64_t d, const int64_t h, const int64_t w) {
        const float taps[5] = {w0, w1, w2, w1, w0};
        float acc = 0.0f;
        for (int k = -kBlurRadius; k <= kBlurRadius; ++k) {
          int64_t at[3] = {d, h, w};
          at[axis] = math::min(s - 1, math::max(int64_t{0}, at[axis] + k));
          acc += taps[k + kBlurRadius] * in((at[0] * s + at[1]) * s + at[2]);
        }
        out((d * s + h) * s + w) = acc;
      });
}

void add_noise_and_quantise(const DeviceView<float>& in, const Kokkos::View<uint8_t*, MemSpace>& out, int64_t volume,
                            float noise, uint64_t seed, uint64_t index) {
  const uint64_t stream = kCellNoiseStream ^ (index << 20);
  Kokkos::parallel_for(
      "tessera::cell_noise", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t v) {
        const float x = in(v) + noise * rng::normal(seed, stream, static_cast<uint64_t>(v));
        out(v) = static_cast<uint8_t>(math::min(1.0f, math::max(0.0f, x)) * 255.0f + 0.5f);
      });
}

}  // namespace

CellVolumes::CellVolumes(const Options& options) : options_(options) {
  const int64_t s = options_.size;
  if (s < 8 || s > 1024) throw Error("cell volumes: the size must be 8 to 1024 voxels, got " + std::to_string(s));
  if (!(options_.cell_size >= 4.0 && options_.cell_size <= static_cast<double>(s)))
    throw Error("cell volumes: the cell size must be 4 voxels to the volume's size (" + std::to_string(s) + "), got " +
                std::to_string(options_.cell_size));
  if (!(options_.membrane >= 0.5 && options_.membrane <= 0.25 * options_.cell_size))
    throw Error("cell volumes: the membrane thickness must be 0.5 voxels to a quarter of the cell size, got " +
                std::to_string(options_.membrane));
  if (!(options_.noise >= 0.0 && options_.noise <= 1.0))
    throw Error("cell volumes: the noise must be in [0, 1], got " + std::to_string(options_.noise));
  grid_ = static_cast<int64_t>(std::ceil(static_cast<double>(s) / options_.cell_size));
  seeds_ = Seeds("tessera::cell_seeds", static_cast<size_t>(grid_ * grid_ * grid_), 5);
  intensity_ = Tensor(Shape{s * s * s}, "tessera::cell_intensity");
  blurred_ = Tensor(Shape{s * s * s}, "tessera::cell_blurred");
  image_ = Kokkos::View<uint8_t*, MemSpace>("tessera::cell_image", static_cast<size_t>(s * s * s));
  labels_ = Kokkos::View<uint8_t*, MemSpace>("tessera::cell_labels", static_cast<size_t>(s * s * s));
}

void CellVolumes::clean(int64_t index, const DeviceView<float>& intensity, const DeviceView<uint8_t>& labels,
                        const InstanceView& instances) {
  const int64_t s = options_.size, cells = grid_ * grid_ * grid_;
  require_shape(
      static_cast<int64_t>(intensity.extent(0)) >= s * s * s && static_cast<int64_t>(labels.extent(0)) >= s * s * s &&
          (instances.extent(0) == 0 || static_cast<int64_t>(instances.extent(0)) >= s * s * s),
      "cell volumes: a sample needs " + std::to_string(s * s * s) + " values");
  const auto pitch = static_cast<float>(options_.cell_size);
  auto host = Kokkos::create_mirror_view(seeds_);
  const uint64_t stream = kSeedStream ^ (static_cast<uint64_t>(index) << 20);
  for (int64_t g = 0; g < cells; ++g) {
    const int64_t cell[3] = {g / (grid_ * grid_), (g / grid_) % grid_, g % grid_};
    auto u = [&](uint64_t k) { return rng::uniform(options_.seed, stream, static_cast<uint64_t>(g) * 8 + k); };
    // Jittered within the middle 80% of its grid cell: cells of varied shape that still tile
    // the volume evenly (pure random seeds give slivers and giants).
    for (int k = 0; k < 3; ++k)
      host(g, k) = (static_cast<float>(cell[k]) + 0.1f + 0.8f * u(static_cast<uint64_t>(k))) * pitch;
    host(g, 3) = 0.09f * pitch * pitch * u(3);  // power-diagram weight: some cells grow at their neighbours' cost
    host(g, 4) = 0.55f + 0.3f * u(4);           // the cell's brightness
  }
  Kokkos::deep_copy(seeds_, host);
  render(seeds_, s, grid_, pitch, static_cast<float>(options_.membrane), options_.seed, static_cast<uint64_t>(index),
         intensity, labels, instances);
}

void CellVolumes::sample(int64_t index, uint8_t* image, uint8_t* labels, int32_t* instances) {
  const int64_t s = options_.size, volume = s * s * s;
  if (instances && instances_.extent(0) == 0)
    instances_ = InstanceView("tessera::cell_instances", static_cast<size_t>(volume));
  clean(index, intensity_.view(), labels_, instances ? instances_ : InstanceView());
  blur_axis(intensity_.view(), blurred_.view(), s, 0);
  blur_axis(blurred_.view(), intensity_.view(), s, 1);
  blur_axis(intensity_.view(), blurred_.view(), s, 2);
  add_noise_and_quantise(blurred_.view(), image_, volume, static_cast<float>(options_.noise), options_.seed,
                         static_cast<uint64_t>(index));
  using HostBytes = Kokkos::View<uint8_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::deep_copy(HostBytes(image, static_cast<size_t>(volume)), image_);
  Kokkos::deep_copy(HostBytes(labels, static_cast<size_t>(volume)), labels_);
  if (instances) {
    using HostIds = Kokkos::View<int32_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(HostIds(instances, static_cast<size_t>(volume)), instances_);
  }
}

}  // namespace tessera::io
