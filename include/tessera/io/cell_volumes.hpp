#pragma once
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::io {

/// Synthetic electron-microscopy-like volumes for segmentation, the data of
/// `tessera datagen cells`: tightly packed cell bodies (a Voronoi tessellation of seeds jittered
/// around a grid of pitch `cell_size`, each seed weighted so that cells differ in size) whose
/// shared boundaries are dark membranes `membrane` voxels thick; inside, each cell has its own
/// brightness, a fine cytoplasm texture and a few dark organelle-like blobs, so darkness alone
/// does not mark a membrane. The image is blurred (the microscope's point spread) and noisy
/// (Gaussian, `noise` of the [0, 1] intensity range) and stored as uint8, as EM data is.
/// Labels, one per voxel: 0 = membrane (cell boundary), 1 = cell interior (the foreground); and,
/// when asked for, the instance id of each voxel: its cell's seed index + 1, 0 on membrane (a
/// power-diagram cell is convex, so each id's voxels are one connected object).
/// Every sample is a pure function of (seed, index), whichever rank or device computes it.
class CellVolumes {
 public:
  struct Options {
    int64_t size = 64;        // voxels per side
    double cell_size = 14.0;  // grid pitch of the cell seeds, voxels: about a cell's diameter
    double membrane = 1.6;    // membrane thickness, voxels
    double noise = 0.08;      // standard deviation of the additive noise, in [0, 1] intensity units
    uint64_t seed = 0;
  };
  static constexpr uint8_t kMembrane = 0, kInterior = 1;
  using InstanceView = Kokkos::View<int32_t*, MemSpace>;

  explicit CellVolumes(const Options& options);

  /// Sample `index`: S³ image bytes and S³ labels, row-major [D, H, W], into host memory, and
  /// its S³ instance ids unless `instances` is null.
  void sample(int64_t index, uint8_t* image, uint8_t* labels, int32_t* instances = nullptr);
  /// The noise-free, unblurred intensity in [0, 1] and the labels of sample `index`, on the
  /// device (S³ each), and its instance ids where `instances` is allocated; for tests.
  void clean(int64_t index, const DeviceView<float>& intensity, const DeviceView<uint8_t>& labels,
             const InstanceView& instances = {});

  const Options& options() const { return options_; }
  /// Seeds per axis of the grid the cells grow from.
  int64_t grid() const { return grid_; }

 private:
  Options options_;
  int64_t grid_ = 0;
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> seeds_;  // [grid³, 5]: d, h, w, weight, brightness
  Tensor intensity_, blurred_;
  Kokkos::View<uint8_t*, MemSpace> image_, labels_;
  InstanceView instances_;  // allocated on the first sample asked for with instances
};

}  // namespace tessera::io
