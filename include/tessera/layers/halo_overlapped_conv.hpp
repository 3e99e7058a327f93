#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/layers/haloed_input.hpp"
#include "tessera/ops/conv.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::layers {

/// The forward pass of a convolution split in space, computed around its halo exchange on any
/// split axis or combination. The output block divides into
///   - the interior: outputs whose window lies inside this rank's block, so they need no halo.
///     They are computed from the block itself, for all samples in one op, while the halos
///     travel;
///   - the shell: per split axis, the slab of outputs before and after the interior (each
///     slab restricted to the interior along the axes handled before it, so the slabs are
///     disjoint), computed after the halos arrived, each by an op on its input box copied out
///     of the haloed input.
/// A piece that is one contiguous run per sample, both in what it reads and in the output (every
/// piece of a depth split, of a height split in 2D), runs per sample on slices of them, with no
/// buffer. Any other piece writes a dense buffer that is copied into its box of the output
/// (its input box too is copied out, unless it is the block), so no backend needs strided
/// tensors; those buffers cost memory (about one output block per layer) and copies. Pieces
/// and buffers are made once per shape. The
/// result equals the op on the whole haloed input up to the order of floating-point sums
/// inside the backend (bit-identical in the tests).
///
/// The copies and the shell's smaller ops are extra work (0-10% of a step on a CPU core, most
/// along width, whose slabs are one output wide), so overlap pays only where messages cost
/// more than that. pays_off() rules out, from shapes alone (the performance model can ask it
/// too), layers without enough interior or work and layers whose pieces would need buffers;
/// OverlapChoice measures the rest.
class HaloOverlappedConv {
 public:
  /// Why overlap is or is not used for a layer.
  struct Verdict {
    bool pays = false;
    bool needs_buffers = false;   // some piece is not contiguous per sample (set once the rest pays)
    double interior_share = 0.0;  // interior outputs / outputs
    std::string reason;           // "interior 14x32x32 of 16x32x32 outputs (88%), 2 shell pieces"
  };
  /// Smallest interior share worth overlapping: below it the shell's separate ops do most of
  /// the work and there is little to hide the messages behind.
  static constexpr double min_interior_share = 0.5;
  /// Smallest forward work (flops per rank) worth splitting into pieces: below it the extra ops'
  /// fixed cost (primitive execution, kernel launches: tens of microseconds) is not small
  /// beside the layer.
  static constexpr double min_flops = 2e7;

  /// Whether overlapping pays for a convolution of geometry `haloed` (the op's geometry on the
  /// haloed block, HaloedInput::op_geometry) with halo `halo`. A pure function of shapes.
  static Verdict pays_off(const ops::ConvGeometry& haloed, const parallel::HaloWidths& halo);

  /// Makes the pieces when pays_off says so, or with `always` whenever there is an interior
  /// (active() then); else makes nothing.
  void reshape(const ops::ConvGeometry& haloed, const parallel::HaloWidths& halo, bool always,
               const registry::OpFactory& ops, const std::string& layer, const std::string& where);
  bool active() const { return !pieces_.empty(); }
  /// Frees the pieces and their buffers (active() is false afterwards; the verdict stays).
  void release() { pieces_.clear(); }
  const Verdict& verdict() const { return verdict_; }

  /// y = conv(halo-gathered x, w) + bias: starts the exchange of `halo`, computes the interior
  /// while the halos travel, finishes the exchange, then computes the shell. halo.gathered(x)
  /// holds the haloed input afterwards, as after HaloedInput::gather.
  void forward(HaloedInput& halo, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y);

 private:
  /// A box of outputs and the op that computes it.
  struct Piece {
    parallel::Index5 out_offset{}, out_extent{};  // in the output block [N, D, H, W, C]
    parallel::Index5 in_offset{}, in_extent{};    // its input box in the haloed block
    bool reads_block = false;                     // the input box is exactly this rank's block
    bool in_place = false;              // contiguous per sample in its source and the output: per-sample op on slices
    parallel::Index5 source_extents{};  // of what it reads (the block or the haloed block)
    Shape sample_input, sample_output;  // the op's shapes (one sample when in place)
    std::unique_ptr<ops::ConvOp> op;
    Tensor input, output;  // dense buffers, unless in place (input also unless reads_block)
  };
  /// The piece of outputs [first, end) per axis (cut only along `haloed_axes`) and its op.
  static Piece make_piece(const ops::ConvGeometry& haloed, const parallel::HaloWidths& halo,
                          const std::array<bool, 3>& haloed_axes, const std::array<int64_t, 3>& first,
                          const std::array<int64_t, 3>& end, const registry::OpFactory& ops, const std::string& layer,
                          const std::string& where);
  void run(Piece& p, const Tensor& source, const Tensor& w, const Tensor& bias, const Tensor& y, HaloedInput& halo);

  Verdict verdict_;
  std::vector<Piece> pieces_;  // the interior first, then the shell
};

}  // namespace tessera::layers
