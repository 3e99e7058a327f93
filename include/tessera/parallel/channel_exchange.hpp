#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/collectives.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::parallel {

/// The two collectives of channel and filter parallelism inside one channel group: a rank's
/// block of an activation with all C channels ("whole", channels-last [..., C]) against its
/// own channel slice (P = the group's size, slices in channel-index order, C/P channels each or,
/// where P does not divide C, ranges that differ by one: ProcessGrid::local_channels).
///  - gather: every rank receives the whole block from the group's slices (MPI_Allgather);
///  - reduce_scatter: the ranks' whole blocks are summed and each keeps its slice of the sum
///    (MPI_Reduce_scatter_block).
/// MPI moves slices as contiguous [P][rows][widest slice] messages, a narrower slice padded to
/// the widest (one channel more at most: MPI's collectives of equal counts, rather than their
/// v-variants, whose counts would have to be built per call); packing into and out of the
/// channels-last layout runs as sub-box copies. Buffers are allocated at construction, so a
/// step allocates nothing. With a group of one both are copies. The messages go through the
/// group's Collectives (MpiCollectives, on host memory).
///
/// In a 16-bit type, gather moves the 16-bit values (half the bytes of fp32), while
/// reduce_scatter widens the partial sums to fp32 (exactly), sums them in fp32 and rounds each
/// rank's slice once, so the sum of P parts costs one rounding rather than P − 1 more; MPI
/// has no 16-bit sum, and moving fp32 here is what a custom reduction would save.
class ChannelExchange {
 public:
  ChannelExchange() = default;
  /// `whole`: this rank's block with all channels (rank 2, 4 or 5), of element type `type`
  /// (slices and whole blocks both). Throws ShapeError naming `where` when it has fewer
  /// channels than grid.channels() has ranks.
  ChannelExchange(const ProcessGrid& grid, const Shape& whole, const std::string& where,
                  ElementType type = ElementType::fp32);
  /// The same over any `group`, whose member q holds `widths[q]` of the whole block's channels
  /// (in member order; they add up to the block's channels): the rows and columns of a 2-D
  /// channel split (ChannelSplit). Throws ShapeError naming `where` when they do not add up.
  ChannelExchange(const Communicator& group, const Shape& whole, std::vector<int64_t> widths,
                  const std::string& where, ElementType type = ElementType::fp32);

  const Shape& whole_shape() const { return whole_; }
  const Shape& slice_shape() const { return slice_; }
  ElementType type() const { return type_; }
  /// whole ← the group's slices side by side along channels.
  void gather(const Tensor& slice, const Tensor& whole);
  /// slice ← this rank's channels of Σ over the group of `whole` (`whole` is left unchanged).
  void reduce_scatter(const Tensor& whole, const Tensor& slice);

 private:
  void require(const Tensor& t, const Shape& expected, const char* what) const;
  /// Each rank's slice width of `whole`'s channels over grid.channels().
  static std::vector<int64_t> slice_widths(const ProcessGrid& grid, const Shape& whole, const std::string& where);
  int parts() const { return collectives_ ? collectives_->size() : 1; }
  bool even() const;
  std::shared_ptr<Collectives> collectives_;  // over grid.channels(); shared by copies (no state per call)
  Shape whole_, slice_;
  std::string where_;
  ElementType type_ = ElementType::fp32;
  std::vector<int64_t> channels_;  // each rank's slice width, in channel-index order
  int64_t widest_ = 0, rows_ = 0;
  DeviceView<float> buffer_;            // words: [P][rows][C/P] of the type (gather) or of fp32 (sums)
  DeviceView<float>::HostMirror host_;  // when MPI cannot read device memory
  // 16-bit types or uneven slices: this rank's slice packed into its room; its room of the fp32 sums.
  DeviceView<float> send_, sums_;
};

}  // namespace tessera::parallel
