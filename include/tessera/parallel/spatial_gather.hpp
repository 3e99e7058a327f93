#pragma once
#include <array>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::parallel {

/// Assembles whole samples from the blocks of a spatial group: every rank of grid.spatial()
/// ends up with the whole spatial extent of its samples (an all-gather), so the layers after
/// it (CosmoFlow's flatten and dense layers) can run replicated on each rank of the group. Its
/// adjoint sums the replicas' gradients back into each block (a reduce-scatter). Blocks may
/// differ in size (an extent the ranks do not divide): each travels in a slot as large as the
/// largest, so the collectives keep equal counts at the price of at most that difference per
/// rank. Buffers are allocated once, at construction.
class SpatialGather {
 public:
  /// `local`: this rank's block [N, D, H, W, C] or [N, H, W, C] under `grid` of samples whose
  /// whole spatial size is `whole` (D, H, W; D = 1 in 2D).
  SpatialGather(const ProcessGrid& grid, const Shape& local, const std::array<int64_t, 3>& whole,
                const std::string& where);
  const Shape& local_shape() const { return local_; }
  /// The block's samples with their whole spatial extent.
  const Shape& whole_shape() const { return whole_; }
  void forward(const Tensor& block, const Tensor& whole);
  /// grad_block = Σ over the group's ranks of their `grad_whole` restricted to this block.
  void backward(const Tensor& grad_whole, const Tensor& grad_block);

 private:
  void require_shape_of(const Tensor& t, const Shape& expected, const char* what) const;
  /// Slot q of the gathered buffer, shaped as spatial rank q's block.
  Array5 slot(int q) const;

  ProcessGrid grid_;
  Shape local_, whole_;
  std::string where_;
  std::vector<Box> boxes_;                                // every spatial rank's box, in spatial-rank order
  int64_t slot_ = 0;                                      // values per slot: the largest block's
  DeviceView<float> blocks_;                              // every rank's slot, in spatial-rank order
  DeviceView<float> own_;                                 // this rank's slot, where its block is smaller
  DeviceView<float>::HostMirror blocks_host_, own_host_;  // MPI staging when not host accessible
};

}  // namespace tessera::parallel
