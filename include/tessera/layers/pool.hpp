#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/config.hpp"
#include "tessera/layers/haloed_input.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/ops/pool.hpp"

namespace tessera::layers {

/// Hyper-parameters of a pooling layer; per-axis values are D, H, W (2D uses depth 1).
struct PoolOptions {
  ops::PoolKind kind = ops::PoolKind::max;
  int spatial_rank = 3;
  std::array<int64_t, 3> kernel{2, 2, 2};
  std::array<int64_t, 3> stride{2, 2, 2};
  std::array<int64_t, 3> padding{0, 0, 0};
};

/// Max or average pooling ("max_pool2d", "max_pool3d", "avg_pool2d", "avg_pool3d") over
/// channels-last input. Keys: "kernel" (2), "stride" (the kernel), "padding" (0, less than the
/// kernel), each one integer or a list per axis. Averages exclude the padding.
class Pool final : public Layer {
 public:
  Pool(std::string name, const PoolOptions& options);
  /// One factory per kind: Pool::from_json<ops::PoolKind::max> etc.
  template <ops::PoolKind Kind>
  static std::unique_ptr<Layer> from_json(const std::string& name, ConfigObject& cfg, int spatial_rank);

  std::string type() const override;
  const PoolOptions& options() const { return options_; }
  /// The geometry for one input shape; throws ShapeError naming the layer if it does not fit.
  ops::PoolGeometry geometry(const Shape& input) const;

  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void reshape(const std::vector<Shape>& inputs) override;
  void forward(const std::vector<Tensor>& inputs, const Tensor& output, const StepInfo& step) override;
  void backward(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& grad_output,
                const std::vector<Tensor>& grad_inputs, const StepInfo& step) override;
  std::string backend() const override;
  /// Split in space with halos; per channel, a slice of the channels runs alone.
  LayerTraits traits() const override;
  std::optional<SlidingWindow> window(const Shape& input) const override;
  std::optional<LayerOp> backend_op(const std::vector<Shape>& inputs) const override;
  const PoolOptions* max_pool_options() const override {
    return options_.kind == ops::PoolKind::max ? &options_ : nullptr;
  }

 private:
  const Shape& single_input(const std::vector<Shape>& inputs) const;

  PoolOptions options_;
  Shape op_input_;
  HaloedInput halo_;
  std::unique_ptr<ops::PoolOp> op_;
};

extern template std::unique_ptr<Layer> Pool::from_json<ops::PoolKind::max>(const std::string&, ConfigObject&, int);
extern template std::unique_ptr<Layer> Pool::from_json<ops::PoolKind::average>(const std::string&, ConfigObject&, int);

}  // namespace tessera::layers
