#include "tessera/parallel/spatial_gather.hpp"

#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/parallel/wait_clock.hpp"

namespace tessera::parallel {
namespace {

/// The first `count` values of `v`.
DeviceView<float> head(const DeviceView<float>& v, int64_t count) {
  return Kokkos::subview(v, std::make_pair<size_t, size_t>(0, static_cast<size_t>(count)));
}

DeviceView<float>::HostMirror head(const DeviceView<float>::HostMirror& v, int64_t count) {
  return Kokkos::subview(v, std::make_pair<size_t, size_t>(0, static_cast<size_t>(count)));
}

}  // namespace

SpatialGather::SpatialGather(const ProcessGrid& grid, const Shape& local, const std::array<int64_t, 3>& whole,
                             const std::string& where)
    : grid_(grid), local_(local), whole_(local), where_(where) {
  require_shape(local.rank() == 4 || local.rank() == 5,
                where + ": only [N, H, W, C] or [N, D, H, W, C] blocks can be gathered, got " + local.str());
  // The spatial group shares the block's samples and channels: only space is gathered.
  const int first = local.rank() == 5 ? 0 : 1;
  for (int k = first; k < 3; ++k) whole_[1 + k - first] = whole[static_cast<size_t>(k)];
  const Distribution& d = grid.distribution();
  const int64_t per_position = local[0] * local[local.rank() - 1];
  for (int q = 0; q < grid.spatial().size(); ++q) {
    boxes_.push_back(grid.box_at({q / (d.height * d.width), (q / d.width) % d.height, q % d.width}, whole, where));
    slot_ = std::max(slot_, boxes_.back().volume() * per_position);
  }
  require_shape(boxes_[static_cast<size_t>(grid.spatial().rank())].volume() * per_position == local.numel(),
                where + ": block " + local.str() + " is not this rank's part of samples of size " + whole_.str());
  if (slot_ > std::numeric_limits<int>::max())
    throw ShapeError(where + ": a block of " + std::to_string(slot_) + " values is too large for one MPI message");
  const size_t parts = boxes_.size();
  blocks_ = DeviceView<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, where + ".gathered_blocks"),
                              static_cast<size_t>(slot_) * parts);
  if (local.numel() < slot_)
    own_ = DeviceView<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, where + ".gather_slot"),
                             static_cast<size_t>(slot_));
  if constexpr (!kHostAccessible) {
    blocks_host_ = Kokkos::create_mirror_view(blocks_);
    own_host_ = DeviceView<float>::HostMirror("tessera::gather_block_host", static_cast<size_t>(slot_));
  }
}

Array5 SpatialGather::slot(int q) const {
  const Box& b = boxes_[static_cast<size_t>(q)];
  return Array5::in_buffer(blocks_, int64_t{q} * slot_,
                           {local_[0], b.extent[0], b.extent[1], b.extent[2], local_[local_.rank() - 1]});
}

void SpatialGather::require_shape_of(const Tensor& t, const Shape& expected, const char* what) const {
  if (t.numel() != expected.numel())
    throw ShapeError(where_ + ": " + what + " has shape " + t.shape().str() + ", expected " + expected.str());
}

void SpatialGather::forward(const Tensor& block, const Tensor& whole) {
  ProfileRegion region("spatial_gather");
  require_shape_of(block, local_, "the block");
  require_shape_of(whole, whole_, "the whole");
  const int64_t count = local_.numel();
  const Communicator& group = grid_.spatial();
  Kokkos::fence();
  if (group.is_serial()) {
    Kokkos::deep_copy(head(blocks_, count), block.view());
  } else {
    // A block smaller than the slot travels in a slot-sized copy; the rest of the slot is unread.
    const DeviceView<float>& send = own_.data() ? own_ : block.view();
    if (own_.data()) Kokkos::deep_copy(head(own_, count), block.view());
    const int n = static_cast<int>(slot_);
    if constexpr (kHostAccessible) {
      const WaitClock::Scope waiting;
      check_mpi(MPI_Allgather(send.data(), n, MPI_FLOAT, blocks_.data(), n, MPI_FLOAT, group.handle()),
                "MPI_Allgather");
    } else {
      Kokkos::deep_copy(head(own_host_, count), head(send, count));
      {
        const WaitClock::Scope waiting;
        check_mpi(MPI_Allgather(own_host_.data(), n, MPI_FLOAT, blocks_host_.data(), n, MPI_FLOAT, group.handle()),
                  "MPI_Allgather");
      }
      Kokkos::deep_copy(blocks_, blocks_host_);
    }
  }
  const Array5 dst = Array5::of(whole);
  for (int q = 0; q < group.size(); ++q) {
    const Box& b = boxes_[static_cast<size_t>(q)];
    const Array5 src = slot(q);
    copy_sub_box("tessera::spatial_gather_unpack", src, {0, 0, 0, 0, 0}, dst,
                 {0, b.offset[0], b.offset[1], b.offset[2], 0}, src.extents);
  }
}

void SpatialGather::backward(const Tensor& grad_whole, const Tensor& grad_block) {
  ProfileRegion region("spatial_gather_backward");
  require_shape_of(grad_whole, whole_, "the whole gradient");
  require_shape_of(grad_block, local_, "the block gradient");
  const int64_t count = local_.numel();
  const Communicator& group = grid_.spatial();
  const Array5 src = Array5::of(grad_whole);
  for (int q = 0; q < group.size(); ++q) {
    const Box& b = boxes_[static_cast<size_t>(q)];
    const Array5 dst = slot(q);
    copy_sub_box("tessera::spatial_gather_pack", src, {0, b.offset[0], b.offset[1], b.offset[2], 0}, dst,
                 {0, 0, 0, 0, 0}, dst.extents);
  }
  Kokkos::fence();
  if (group.is_serial()) {
    Kokkos::deep_copy(grad_block.view(), head(blocks_, count));
    return;
  }
  // The sums land in a slot-sized buffer; this rank's block is its first `count` values.
  const DeviceView<float>& receive = own_.data() ? own_ : grad_block.view();
  const int n = static_cast<int>(slot_);
  if constexpr (kHostAccessible) {
    const WaitClock::Scope waiting;
    check_mpi(MPI_Reduce_scatter_block(blocks_.data(), receive.data(), n, MPI_FLOAT, MPI_SUM, group.handle()),
              "MPI_Reduce_scatter_block");
  } else {
    Kokkos::deep_copy(blocks_host_, blocks_);
    {
      const WaitClock::Scope waiting;
      check_mpi(MPI_Reduce_scatter_block(blocks_host_.data(), own_host_.data(), n, MPI_FLOAT, MPI_SUM, group.handle()),
                "MPI_Reduce_scatter_block");
    }
    Kokkos::deep_copy(head(receive, count), head(own_host_, count));
  }
  if (own_.data()) Kokkos::deep_copy(grad_block.view(), head(own_, count));
}

}  // namespace tessera::parallel
