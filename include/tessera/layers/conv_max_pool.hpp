#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/layers/conv.hpp"
#include "tessera/layers/pool.hpp"

namespace tessera::layers {

/// A convolution whose only consumer is a max pool with non-overlapping windows (kernel =
/// stride, no padding), computed a slab of output depth rows at a time: each slab of the
/// convolution's output is pooled while it is still in cache, and only the pooled output and
/// the position of each window's maximum (one byte) are kept. In backward each slab's output
/// gradient is rebuilt from those and fed at once to the weight gradient and, when asked for,
/// the data gradient; the input gradient sums the slabs' parts (their input rows overlap).
///
/// In the first blocks of a 3D CNN that output is the largest tensor of the network
/// (cosmoflow-small at S=64, batch 4: 134 MB after conv1), and writing it, pooling it, and
/// writing and reading its gradient were memory-bound passes. A graph pass builds this layer from
/// a Conv and a Pool ("fuse_conv_max_pool") where pays_off() and without a spatial split.
/// The result equals the two layers' up to the order of the gradients' sums. Parameters stay
/// the convolution's (`<conv>.weight`, `<conv>.bias`), so checkpoints do not change. Runs in
/// fp32 and bf16 (its slabs and gradients in the layer's type, weight gradients in fp32).
class ConvMaxPool final : public Layer {
 public:
  /// `conv` must not be set up: this layer's setup declares its parameters. It is named
  /// "<conv>+<pool_name>". `slab_bytes` is the size aimed at for one slab of the convolution's
  /// output (it should stay in cache between the convolution and the pooling).
  ConvMaxPool(std::unique_ptr<Conv> conv, const std::string& pool_name, const PoolOptions& pool,
              int64_t slab_bytes = kSlabBytes);
  /// The slab size aimed at by default: within a core's L2 cache.
  static constexpr int64_t kSlabBytes = int64_t{2} << 20;
  /// Whether `pool` after a convolution of `spatial_rank` can be fused: max pooling with
  /// kernel = stride, no padding, and at most 255 window positions.
  static bool can_fuse(const PoolOptions& pool, int spatial_rank);
  /// Whether fusing pays for the convolution `g`: one sample's output is larger than a slab.
  /// Smaller outputs stay in cache between the two layers anyway, and running them a sample
  /// at a time only costs (cosmoflow-small at S=64: conv4 and conv5 took 5 and 7 ms more per
  /// step fused, conv2 with 8 MB per sample 8 ms less).
  static bool pays_off(const ops::ConvGeometry& g);

  std::string type() const override;
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override { return slab_op_ ? slab_op_->backend() : ""; }
  double forward_flops(const std::vector<Shape>& inputs) const override { return conv_->forward_flops(inputs); }
  /// Runs unsplit (the fusion pass builds it only then) and mixes channels as its convolution.
  LayerTraits traits() const override;

 protected:
  /// The convolution's parameters, under its names and in its order.
  void declare_parameters(const std::vector<Shape>& inputs, ParameterRegistry& params) override;

 private:
  /// Output rows [first, first + rows) of one sample's convolution, and the op for them.
  struct Slab {
    int64_t first = 0, rows = 0;
    ops::ConvOp* op = nullptr;
  };
  /// Where slab `slab` of sample `n` reads in the (depth-padded) input `x`, and the shapes of
  /// its input rows and its output rows.
  struct SlabExtent {
    int64_t in_offset;
    Shape in_shape, out_shape;
  };
  SlabExtent extent(const Tensor& x, int64_t n, const Slab& slab) const;
  /// Input rows a slab of `rows` output rows reads (its depth padding is in the input copy).
  int64_t input_rows(int64_t rows) const;
  Tensor padded_input(const Tensor& x);

  std::unique_ptr<Conv> conv_;
  Pool pool_;  // never set up: its geometry and options (errors name the pool layer)
  int64_t slab_bytes_;
  Shape op_input_;
  ops::ConvGeometry conv_g_;
  ops::PoolGeometry pool_g_;
  int64_t depth_padding_ = 0;  // the convolution's, applied by padding the input copy
  std::vector<Slab> slabs_;
  std::unique_ptr<ops::ConvOp> slab_op_, last_slab_op_;
  Tensor padded_;                   // the input with its depth padding (empty: none needed)
  Tensor padded_grad_;              // its gradient, where the slabs' data gradients are summed
  Tensor slab_input_grad_;          // one slab's data gradient
  Tensor slab_, slab_grad_;         // one slab of the convolution's output and its gradient
  Tensor weight_grad_, bias_grad_;  // one slab's parameter gradients, summed into the layer's
  Kokkos::View<uint8_t*, Kokkos::LayoutRight, MemSpace> argmax_;  // per pooled element
};

}  // namespace tessera::layers
