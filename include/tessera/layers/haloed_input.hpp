#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "tessera/core/tensor.hpp"
#include "tessera/parallel/halo_exchange.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::layers {

/// The window of a sliding-window op (convolution, pooling) per axis D, H, W.
struct Window {
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};
  std::array<int64_t, 3> dilation{1, 1, 1};
};

/// The halo (before, after) per axis D, H, W that `window` reaches into when each sample, of
/// spatial size `whole`, is split over `parts` ranks per axis as `alignment` cuts its input
/// and its output; zero along axes not split. Throws ShapeError naming `where`, the axis, the
/// sizes and a rank when some rank's output block would not come from its input block and
/// these halos, or a block is narrower than the halo it lends. Checks every rank's blocks, so
/// all ranks throw alike; a pure function, so layouts can be checked without ranks.
parallel::HaloWidths halo_widths(const std::array<int, 3>& parts, const std::array<int64_t, 3>& whole,
                                 const parallel::SpatialAlignment& alignment, const Window& window,
                                 const std::string& where);

/// The input of a sliding-window layer whose samples are split over depth, height and width:
/// this rank's block surrounded by the halo the window reaches into, so that the op runs on
/// it without padding along the split axes and produces exactly this rank's block of the
/// serial output. Along the global boundary the halo holds the padding value (0 for
/// convolutions, the lowest float for max pooling), so the boundary stays that of the serial
/// layer. Along axes that are not split the op keeps its own padding and no halo is needed.
///
/// Forward gathers the neighbours' data into the halo; backward returns the gradient that
/// fell into the halo to the rank owning it (the adjoint). Inactive — a pass-through — when
/// the grid does not split space or the window reaches no neighbour (e.g. 2x2 pooling).
class HaloedInput {
 public:
  /// `local` is this rank's block of the input, of element type `type` (the layer's
  /// precision: the haloed buffers and the halo messages hold it), and `whole` the input's
  /// whole spatial size (D, H, W; D = 1 in 2D). Throws ShapeError naming `where`, the axis and
  /// the sizes when the output blocks would not line up with the input blocks (halo_widths).
  void reshape(const parallel::ProcessGrid& grid, const Shape& local, const std::array<int64_t, 3>& whole,
               const Window& window, float boundary_value, const std::string& where,
               ElementType type = ElementType::fp32);
  bool active() const { return active_; }
  /// The input extent the op sees (the block plus halos) and the padding it still applies.
  const Shape& op_input_shape() const { return op_shape_; }
  const std::array<int64_t, 3>& op_padding() const { return op_padding_; }
  /// `g` (a ConvGeometry or PoolGeometry of the layer) for the op on the haloed block: its
  /// input extent and padding replaced, then validated (ShapeError naming `where`).
  template <class Geometry>
  Geometry op_geometry(Geometry g, const std::string& where) const {
    const ActivationDims a = ActivationDims::of(op_shape_);
    g.in_size = {a.d, a.h, a.w};
    g.padding = op_padding_;
    g.validate(where);
    return g;
  }

  /// Forward: the tensor the op reads — `x` with its halos filled, or `x` itself when inactive.
  const Tensor& gather(const Tensor& x);
  /// gather() in two halves, so that work on the interior can run while halos are in flight:
  /// after start_gather the interior of gathered(x) is filled, after finish_gather the halos.
  void start_gather(const Tensor& x);
  void finish_gather();
  /// Lets halos in flight advance (between pieces of overlapped work).
  void progress() { exchange_.progress(); }
  /// The halo widths (before, after) per axis D, H, W; zero along axes that are not split.
  const parallel::HaloWidths& widths() const { return widths_; }
  /// The input this op read in the last gather (for backward passes that need it).
  const Tensor& gathered(const Tensor& x) const { return active_ ? padded_ : x; }
  /// Backward: where the op writes its input gradient — a haloed buffer (allocated on first
  /// use: a layer reading the model input never needs it), or `dx` itself.
  const Tensor& grad_buffer(const Tensor& dx);
  /// Starts sending the halo part of the gradient in grad_buffer() to the ranks owning it and
  /// writes this rank's own part into `dx`; finish_scatter() adds what the neighbours return.
  /// Work that does not touch `dx` may run in between.
  void start_scatter(const Tensor& dx);
  void finish_scatter();

 private:
  bool active_ = false;
  float boundary_value_ = 0.0f;
  /// Adds the exchange finished since `before` to the profile: halo_wait/, halo_exposed/ and
  /// halo_in_flight/ entries of this layer.
  void record_account(const parallel::HaloAccount& before) const;
  std::string region_;          // profile region: exchange work not overlapped (packing, copies, waits)
  std::string account_region_;  // the layer, in the names of the account's profile entries
  parallel::HaloWidths widths_;
  Shape local_, op_shape_;
  std::string label_;
  ElementType type_ = ElementType::fp32;
  std::array<int64_t, 3> op_padding_{0, 0, 0};
  parallel::HaloExchange exchange_;
  Tensor padded_, grad_padded_;
};

}  // namespace tessera::layers
