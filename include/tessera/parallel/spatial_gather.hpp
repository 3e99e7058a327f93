#pragma once
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::parallel {

/// Assembles whole samples from the blocks of a spatial group: every rank of grid.spatial()
/// ends up with the whole spatial extent of its samples (an all-gather of equal blocks), so
/// the layers after it (CosmoFlow's flatten and dense layers) can run replicated on each rank
/// of the group. Its adjoint sums the replicas' gradients back into each block (a
/// reduce-scatter). Buffers are allocated once, at construction.
class SpatialGather {
 public:
  /// `local`: this rank's block [N, D, H, W, C] or [N, H, W, C] under `grid`.
  SpatialGather(const ProcessGrid& grid, const Shape& local, const std::string& where);
  const Shape& local_shape() const { return local_; }
  /// The block's samples with their whole spatial extent.
  const Shape& whole_shape() const { return whole_; }
  void forward(const Tensor& block, const Tensor& whole);
  /// grad_block = Σ over the group's ranks of their `grad_whole` restricted to this block.
  void backward(const Tensor& grad_whole, const Tensor& grad_block);

 private:
  void require_shape_of(const Tensor& t, const Shape& expected, const char* what) const;
  /// Where spatial rank q's block starts in the whole sample.
  Index5 offset_of(int q) const;

  ProcessGrid grid_;
  Shape local_, whole_;
  std::string where_;
  DeviceView<float> blocks_;                                // every rank's block, in spatial-rank order
  DeviceView<float>::HostMirror blocks_host_, block_host_;  // MPI staging when not host accessible
};

}  // namespace tessera::parallel
