#include "tessera/io/cosmoflow_fields.hpp"

#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::io {
namespace {
constexpr uint64_t kParameterStream = 0x636f736d6f70ull;  // "cosmop"
constexpr uint64_t kCosmoflowNoiseStream = 0x636f736d6f6eull;      // "cosmon"
constexpr uint64_t kCountStream = 0x636f736d6f63ull;      // "cosmoc"
constexpr double kPi = 3.14159265358979323846;

using ComplexView = Kokkos::View<Kokkos::complex<float>*, MemSpace>;

/// In-place radix-2 FFT of every line along `axis` of an S³ cube (unnormalised; the inverse
/// uses conjugate twiddles). One work item per line: datagen is not the hot path, and the same
/// code runs on CPUs and GPUs.
void fft_axis(const ComplexView& x, const ComplexView& twiddles, int64_t s, int log_s, int axis, bool inverse) {
  const int64_t stride = axis == 2 ? 1 : (axis == 1 ? s : s * s);
  Kokkos::parallel_for(
      "tessera::cosmoflow_fft", RangePolicy(0, s * s), KOKKOS_LAMBDA(const int64_t line) {
        const int64_t a = line / s, b = line % s;
        const int64_t base = axis == 2 ? (a * s + b) * s : (axis == 1 ? a * s * s + b : a * s + b);
        for (int64_t i = 0; i < s; ++i) {
          int64_t j = 0;
          for (int k = 0; k < log_s; ++k) j |= ((i >> k) & 1) << (log_s - 1 - k);
          if (i < j) {
            const Kokkos::complex<float> t = x(base + i * stride);
            x(base + i * stride) = x(base + j * stride);
            x(base + j * stride) = t;
          }
        }
        for (int64_t len = 2; len <= s; len <<= 1) {
          const int64_t half = len / 2, step = s / len;
          for (int64_t i = 0; i < s; i += len)
            for (int64_t k = 0; k < half; ++k) {
              Kokkos::complex<float> w = twiddles(k * step);
              if (inverse) w = Kokkos::conj(w);
              const Kokkos::complex<float> u = x(base + (i + k) * stride);
              const Kokkos::complex<float> v = x(base + (i + k + half) * stride) * w;
              x(base + (i + k) * stride) = u + v;
              x(base + (i + k + half) * stride) = u - v;
            }
        }
      });
}

KOKKOS_INLINE_FUNCTION double frequency(int64_t i, int64_t s) {
  return static_cast<double>(i < s / 2 ? i : i - s) / static_cast<double>(s);
}

KOKKOS_INLINE_FUNCTION double spectrum_at(double f, double n, double f_damp) {
  if (f <= 0.0) return 0.0;
  const double r = f / f_damp;
  return math::exp(n * math::log(f) - r * r);
}

template <class T>
int64_t draw_counts(const DeviceView<float>& rho, int64_t values, uint64_t seed, uint64_t stream, double mean_count,
                    unsigned char* bytes, void* host_out) {
  const Kokkos::View<T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> out(reinterpret_cast<T*>(bytes), values);
  const double top = static_cast<double>(std::numeric_limits<T>::max());
  int64_t clipped = 0;
  Kokkos::parallel_reduce(
      "tessera::cosmoflow_counts", RangePolicy(0, values),
      KOKKOS_LAMBDA(const int64_t i, int64_t& n_clipped) {
        const double lambda = mean_count * static_cast<double>(rho(i));
        double count = 0.0;
        if (lambda < 12.0) {
          // Knuth: multiply uniforms until the product drops below e^−λ.
          const double limit = math::exp(-lambda);
          double p = 1.0;
          for (uint64_t k = 0; k < 64; ++k) {
            p *= static_cast<double>(rng::uniform(seed, stream, static_cast<uint64_t>(i) * 64 + k));
            if (p <= limit) break;
            count += 1.0;
          }
        } else {
          // Normal approximation, good to well under a count's spread at this mean.
          const double z = static_cast<double>(rng::normal(seed, stream ^ 0x6e6f726d616cull, static_cast<uint64_t>(i)));
          count = lambda + math::sqrt(lambda) * z + 0.5;
          count = count < 0.0 ? 0.0 : count;
        }
        // Clipped before the conversion, which truncates: a double beyond T's range has no
        // defined conversion (it came out as 0 for a huge mean count).
        if (!(count <= top)) {
          count = top;
          ++n_clipped;
        }
        out(i) = static_cast<T>(count);
      },
      clipped);
  Kokkos::deep_copy(Kokkos::View<T*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(static_cast<T*>(host_out), values),
                    out);
  return clipped;
}

}  // namespace

CosmoFlowFields::CosmoFlowFields(const Options& options) : options_(options) {
  const int64_t s = options_.size;
  if (s < 4 || s > 1024 || (s & (s - 1)) != 0)
    throw Error("cosmoflow fields: the size must be a power of two in [4, 1024], got " + std::to_string(s));
  if (options_.channels < 1 || options_.channels > 64)
    throw Error("cosmoflow fields: channels must be in [1, 64], got " + std::to_string(options_.channels));
  field_ = ComplexView("tessera::cosmoflow_field", static_cast<size_t>(s * s * s));
  twiddles_ = ComplexView("tessera::cosmoflow_twiddles", static_cast<size_t>(s / 2));
  auto host = Kokkos::create_mirror_view(twiddles_);
  for (int64_t k = 0; k < s / 2; ++k) {
    const double angle = -2.0 * kPi * static_cast<double>(k) / static_cast<double>(s);
    host(k) = Kokkos::complex<float>(static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle)));
  }
  Kokkos::deep_copy(twiddles_, host);
}

std::array<float, 4> CosmoFlowFields::parameters(int64_t index) const {
  std::array<float, 4> theta{};
  for (uint64_t k = 0; k < 4; ++k)
    theta[k] = 2.0f * rng::uniform(options_.seed, kParameterStream, static_cast<uint64_t>(index) * 4 + k) - 1.0f;
  return theta;
}

std::array<double, 4> CosmoFlowFields::physical(const std::array<float, 4>& t) {
  return {0.6 * std::exp(0.35 * t[0]), 2.0 + 2.0 * t[1], 0.3 * std::exp(0.5 * t[2]), 0.3 + 0.2 * t[3]};
}

double CosmoFlowFields::spectrum(double f, double n, double f_damp) { return spectrum_at(f, n, f_damp); }

void CosmoFlowFields::gaussian_field(int64_t index, const DeviceView<float>& out) {
  const int64_t s = options_.size, volume = s * s * s;
  int log_s = 0;
  while ((int64_t{1} << log_s) < s) ++log_s;
  const auto phys = physical(parameters(index));
  const double n = phys[1], f_damp = phys[2];
  const uint64_t seed = options_.seed, stream = kCosmoflowNoiseStream ^ static_cast<uint64_t>(index);
  auto x = field_;
  Kokkos::parallel_for(
      "tessera::cosmoflow_noise", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t i) {
        x(i) = Kokkos::complex<float>(rng::normal(seed, stream, static_cast<uint64_t>(i)), 0.0f);
      });
  for (int axis = 0; axis < 3; ++axis) fft_axis(field_, twiddles_, s, log_s, axis, false);
  // White noise of unit variance has E|ŵ(k)|² = S³, so after the filter and the inverse FFT
  // (which divides by S³) the field's variance is the mean of P over all modes: divide it out.
  double total = 0.0;
  Kokkos::parallel_reduce(
      "tessera::cosmoflow_spectrum_sum", RangePolicy(0, volume),
      KOKKOS_LAMBDA(const int64_t i, double& sum) {
        const double fd = frequency(i / (s * s), s), fh = frequency((i / s) % s, s), fw = frequency(i % s, s);
        sum += spectrum_at(math::sqrt(fd * fd + fh * fh + fw * fw), n, f_damp);
      },
      total);
  const double scale = 1.0 / (static_cast<double>(volume) * std::sqrt(total / static_cast<double>(volume)));
  Kokkos::parallel_for(
      "tessera::cosmoflow_filter", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t i) {
        const double fd = frequency(i / (s * s), s), fh = frequency((i / s) % s, s), fw = frequency(i % s, s);
        const double amplitude = math::sqrt(spectrum_at(math::sqrt(fd * fd + fh * fh + fw * fw), n, f_damp)) * scale;
        x(i) *= static_cast<float>(amplitude);
      });
  for (int axis = 0; axis < 3; ++axis) fft_axis(field_, twiddles_, s, log_s, axis, true);
  Kokkos::parallel_for(
      "tessera::cosmoflow_real_part", RangePolicy(0, volume), KOKKOS_LAMBDA(const int64_t i) { out(i) = x(i).real(); });
}

void CosmoFlowFields::densities(int64_t index, const Tensor& out) {
  const int64_t s = options_.size, volume = s * s * s, channels = options_.channels;
  require_shape(out.numel() == volume * channels, "cosmoflow fields: densities need " +
                                                      std::to_string(volume * channels) + " values, got " +
                                                      out.shape().str());
  ensure_shape(densities_, Shape{volume}, "tessera::cosmoflow_gaussian");
  gaussian_field(index, densities_.view());
  const auto phys = physical(parameters(index));
  const double sigma = phys[0], gamma = phys[3];
  auto g = densities_.view();
  auto rho = out.view();
  Kokkos::parallel_for(
      "tessera::cosmoflow_lognormal", MDPolicy<2>({0, 0}, {volume, channels}),
      KOKKOS_LAMBDA(const int64_t v, const int64_t c) {
        const double sc = sigma * math::exp(-gamma * static_cast<double>(channels - 1 - c));
        rho(v * channels + c) = static_cast<float>(math::exp(sc * static_cast<double>(g(v)) - 0.5 * sc * sc));
      });
}

int64_t CosmoFlowFields::stored_values(int64_t index, ElementType type, double mean_count, void* host_out) {
  const int64_t s = options_.size, values = s * s * s * options_.channels;
  ensure_shape(rho_, Shape{values}, "tessera::cosmoflow_densities");
  const Tensor& rho = rho_;
  densities(index, rho);
  if (type == ElementType::float32) {
    Kokkos::deep_copy(
        Kokkos::View<float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(static_cast<float*>(host_out), values),
        rho.view());
    return 0;
  }
  if (!(mean_count > 0.0)) throw Error("cosmoflow fields: the mean count must be positive");
  const auto bytes = static_cast<size_t>(values * element_size(type));
  if (stored_.extent(0) < bytes) stored_ = Kokkos::View<unsigned char*, MemSpace>("tessera::cosmoflow_stored", bytes);
  const uint64_t seed = options_.seed, stream = kCountStream ^ static_cast<uint64_t>(index);
  switch (type) {
    case ElementType::uint8: return draw_counts<uint8_t>(rho.view(), values, seed, stream, mean_count, stored_.data(), host_out);
    case ElementType::int16: return draw_counts<int16_t>(rho.view(), values, seed, stream, mean_count, stored_.data(), host_out);
    case ElementType::int32: return draw_counts<int32_t>(rho.view(), values, seed, stream, mean_count, stored_.data(), host_out);
    case ElementType::float32: break;
  }
  return 0;
}

}  // namespace tessera::io
