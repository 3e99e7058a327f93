#include "tessera/parallel/spatial_gather.hpp"

#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/parallel/wait_clock.hpp"

namespace tessera::parallel {
SpatialGather::SpatialGather(const ProcessGrid& grid, const Shape& local, const std::string& where)
    : grid_(grid),
      local_(local),
      // The spatial group shares the block's samples and channels: only space is gathered.
      whole_(grid.global_shape(local, local.rank() > 0 ? local[0] : 0, local.rank() > 0 ? local[local.rank() - 1] : 0)),
      where_(where) {
  require_shape(local.rank() == 4 || local.rank() == 5,
                where + ": only [N, H, W, C] or [N, D, H, W, C] blocks can be gathered, got " + local.str());
  const int64_t count = local.numel();
  if (count > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a block of " + std::to_string(count) + " values is too large for one MPI message");
  const int parts = grid.spatial().size();
  blocks_ = DeviceView<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, where + ".gathered_blocks"),
                              static_cast<size_t>(count * parts));
  if constexpr (!kHostAccessible) {
    blocks_host_ = Kokkos::create_mirror_view(blocks_);
    block_host_ = DeviceView<float>::HostMirror("tessera::gather_block_host", static_cast<size_t>(count));
  }
}

Index5 SpatialGather::offset_of(int q) const {
  const Distribution& d = grid_.distribution();
  const Index5 block = extents5_of(local_);
  const int64_t z = q / (d.height * d.width), y = (q / d.width) % d.height, x = q % d.width;
  return {0, z * block[1], y * block[2], x * block[3], 0};
}

void SpatialGather::require_shape_of(const Tensor& t, const Shape& expected, const char* what) const {
  if (t.numel() != expected.numel())
    throw ShapeError(where_ + ": " + what + " has shape " + t.shape().str() + ", expected " + expected.str());
}

void SpatialGather::forward(const Tensor& block, const Tensor& whole) {
  ProfileRegion region("spatial_gather");
  require_shape_of(block, local_, "the block");
  require_shape_of(whole, whole_, "the whole");
  const int count = static_cast<int>(local_.numel());
  const Communicator& group = grid_.spatial();
  Kokkos::fence();
  if (group.is_serial()) {
    Kokkos::deep_copy(Kokkos::subview(blocks_, std::make_pair<size_t, size_t>(0, static_cast<size_t>(count))),
                      block.view());
  } else if constexpr (kHostAccessible) {
    {
      const WaitClock::Scope waiting;
      check_mpi(MPI_Allgather(block.data(), count, MPI_FLOAT, blocks_.data(), count, MPI_FLOAT, group.handle()),
                "MPI_Allgather");
    }
  } else {
    Kokkos::deep_copy(block_host_, block.view());
    {
      const WaitClock::Scope waiting;
      check_mpi(
          MPI_Allgather(block_host_.data(), count, MPI_FLOAT, blocks_host_.data(), count, MPI_FLOAT, group.handle()),
          "MPI_Allgather");
    }
    Kokkos::deep_copy(blocks_, blocks_host_);
  }
  const Index5 extent = extents5_of(local_);
  const Array5 dst = Array5::of(whole);
  for (int q = 0; q < group.size(); ++q)
    copy_sub_box("tessera::spatial_gather_unpack", Array5::in_buffer(blocks_, int64_t{q} * count, extent),
                 {0, 0, 0, 0, 0}, dst, offset_of(q), extent);
}

void SpatialGather::backward(const Tensor& grad_whole, const Tensor& grad_block) {
  ProfileRegion region("spatial_gather_backward");
  require_shape_of(grad_whole, whole_, "the whole gradient");
  require_shape_of(grad_block, local_, "the block gradient");
  const int count = static_cast<int>(local_.numel());
  const Communicator& group = grid_.spatial();
  const Index5 extent = extents5_of(local_);
  const Array5 src = Array5::of(grad_whole);
  for (int q = 0; q < group.size(); ++q)
    copy_sub_box("tessera::spatial_gather_pack", src, offset_of(q),
                 Array5::in_buffer(blocks_, int64_t{q} * count, extent), {0, 0, 0, 0, 0}, extent);
  Kokkos::fence();
  if (group.is_serial()) {
    Kokkos::deep_copy(grad_block.view(),
                      Kokkos::subview(blocks_, std::make_pair<size_t, size_t>(0, static_cast<size_t>(count))));
  } else if constexpr (kHostAccessible) {
    {
      const WaitClock::Scope waiting;
      check_mpi(MPI_Reduce_scatter_block(blocks_.data(), grad_block.data(), count, MPI_FLOAT, MPI_SUM, group.handle()),
                "MPI_Reduce_scatter_block");
    }
  } else {
    Kokkos::deep_copy(blocks_host_, blocks_);
    {
      const WaitClock::Scope waiting;
      check_mpi(
          MPI_Reduce_scatter_block(blocks_host_.data(), block_host_.data(), count, MPI_FLOAT, MPI_SUM, group.handle()),
          "MPI_Reduce_scatter_block");
    }
    Kokkos::deep_copy(grad_block.view(), block_host_);
  }
}

}  // namespace tessera::parallel
