#pragma once
#include <array>

#include "tessera/io/dataset.hpp"

namespace tessera::io {

/// Synthetic cosmology-like volumes whose statistics are set by four parameters, the
/// regression targets, each drawn uniformly from [-1, 1] per sample:
///   θ0 amplitude      — the field's standard deviation, exp(0.5·θ0);
///   θ1 correlation    — the Gaussian smoothing length of the initial noise, 1 + 0.5·θ1 voxels;
///   θ2 mean density   — an offset θ2;
///   θ3 growth rate    — channel c (a "redshift") scales the field by exp(0.4·θ3·(c − (C−1)/2)).
/// All channels share one noise realisation (the same initial conditions seen at several
/// epochs), smoothed with periodic boundaries and normalised to unit variance before scaling,
/// so amplitude and correlation length are not confounded. Every sample is a pure function of
/// (seed, index): the dataset needs no storage and any rank can produce any sample.
///
/// With `task = segmentation` the targets are instead one class per voxel — 1 where the
/// smoothed field is positive, 0 elsewhere — and each channel is that field plus independent
/// unit white noise, so a network must denoise before it can threshold (a U-Net-shaped task).
class SyntheticFields final : public Dataset {
 public:
  enum class Task { regression, segmentation };
  struct Options {
    Task task = Task::regression;
    int64_t samples = 512;
    int64_t size = 16;  // voxels per side
    int64_t channels = 4;
    uint64_t seed = 0;
    uint64_t index_offset = 0;  // validation sets use a disjoint range of indices
    /// Keep generated samples in memory (up to this many MiB in all) so later epochs copy
    /// instead of regenerating; 0 disables the store.
    int64_t store_mb = 1024;
  };
  explicit SyntheticFields(const Options& options);

  std::string describe() const override;
  int64_t size() const override { return options_.samples; }
  Shape sample_shape() const override { return Shape{options_.size, options_.size, options_.size, options_.channels}; }
  Shape target_shape() const override {
    return options_.task == Task::regression ? Shape{4} : Shape{options_.size, options_.size, options_.size};
  }
  bool targets_per_voxel() const override { return options_.task == Task::segmentation; }
  void load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
            const Tensor& targets) override;

  /// The four parameters of sample `index`.
  std::array<float, 4> parameters(int64_t index) const;
  /// Generates the whole of sample `index` into row `row` of `inputs`/`targets` (whole-sample
  /// rows), bypassing the store. (Public because it launches device lambdas, which CUDA
  /// forbids in private members.)
  void generate(int64_t index, int64_t row, const Tensor& inputs, const Tensor& targets);

 private:
  Options options_;
  Tensor noise_, smoothed_, tmp_;  // per-sample scratch, reused across loads
  Tensor whole_inputs_, whole_targets_;  // one whole sample, cut to the box without a store
  Kokkos::View<float*, MemSpace> weights_;
  // The in-memory store: one row of inputs and one of targets per sample, filled on first use.
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> stored_inputs_, stored_targets_;
  std::vector<char> stored_;
  Kokkos::View<int64_t*, MemSpace> rows_;       // batch indices on the device, grow-only
  Kokkos::View<int64_t*, MemSpace> first_row_;  // {0}: gathers from the one whole sample
};

}  // namespace tessera::io
