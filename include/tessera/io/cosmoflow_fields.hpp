#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/io/sample_schema.hpp"

namespace tessera::io {

/// Synthetic CosmoFlow-like universes, the data of `tessera datagen cosmoflow`. Each sample is
/// a periodic S³ box seen at C redshifts (channels), drawn from four parameters θ, each uniform
/// in [−1, 1] per sample, which are its regression targets (like CosmoFlow's "unitPar"):
///   θ0 amplitude        σ = 0.6·exp(0.35·θ0), the log-density spread today (last channel);
///   θ1 spectral index   n = 2 + 2·θ1, the slope of the power spectrum on large scales;
///   θ2 damping scale    f_d = 0.3·exp(0.5·θ2) cycles per voxel, where small scales are cut;
///   θ3 growth rate      γ = 0.3 + 0.2·θ3: channel c has spread σ_c = σ·exp(−γ·(C − 1 − c)).
/// A Gaussian random field g with power spectrum P(f) ∝ fⁿ·exp(−(f/f_d)²), normalised to unit
/// variance, is made by filtering white noise in Fourier space (a radix-2 FFT on the device,
/// so S must be a power of two); channel c holds the log-normal density
///   ρ_c = exp(σ_c·g − σ_c²/2)          (mean 1),
/// the same initial conditions grown by different amounts. Stored as integers, a sample holds
/// particle counts per voxel drawn around mean_count·ρ_c (Poisson shot noise, CosmoFlow's
/// kind of data); as float32 it holds ρ_c itself. Every sample is a pure function of
/// (seed, index), whichever rank or device computes it. The two shape parameters act on
/// different scales (a power law below the peak, a Gaussian cut above it), so even a 16³ box
/// pins down all four.
class CosmoFlowFields {
 public:
  struct Options {
    int64_t size = 64;  // voxels per side, a power of two
    int64_t channels = 4;
    uint64_t seed = 0;
  };
  explicit CosmoFlowFields(const Options& options);

  /// θ of sample `index`.
  std::array<float, 4> parameters(int64_t index) const;
  /// {σ, n, f_d, γ} for θ (see the class comment).
  static std::array<double, 4> physical(const std::array<float, 4>& theta);
  /// The unnormalised power spectrum fⁿ·exp(−(f/f_d)²) at frequency f (cycles per voxel).
  static double spectrum(double f, double n, double f_damp);

  /// The Gaussian field g of sample `index` (unit variance), S³ values, for tests.
  void gaussian_field(int64_t index, const DeviceView<float>& out);
  /// The densities ρ of sample `index`: S³·C values, channels-last.
  void densities(int64_t index, const Tensor& out);
  /// Sample `index` as stored: `type` float32 keeps ρ, the integer types hold particle counts
  /// of mean `mean_count`·ρ, clipped to the type's range. Writes S³·C values of `type` to the
  /// host memory at `host_out`; returns how many counts were clipped.
  int64_t stored_values(int64_t index, ElementType type, double mean_count, void* host_out);

  const Options& options() const { return options_; }

 private:
  Options options_;
  Kokkos::View<Kokkos::complex<float>*, MemSpace> field_;  // S³, the FFT's work array
  Kokkos::View<Kokkos::complex<float>*, MemSpace> twiddles_;  // exp(−2πik/S), k < S/2
  Tensor densities_;  // g, then reused
  Tensor rho_;        // the densities of stored_values()
  Kokkos::View<unsigned char*, MemSpace> stored_;
};

}  // namespace tessera::io
