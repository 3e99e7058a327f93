// The Kokkos batch norm: the templated kernels of batch_norm_kernels.hpp in float, on fp32 or
// bf16 activations (statistics, parameters and arithmetic fp32 either way), with the
// geometry's activation epilogue fused into its passes.
#include "tessera/backends/kokkos/batch_norm_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosBatchNorm final : public ops::BatchNormOp {
 public:
  explicit KokkosBatchNorm(const ops::BatchNormGeometry& g)
      : g_(g),
        workspace_(make_channel_sum_workspace(g.rows, g.channels)),
        scale_(Shape{g.channels}, "tessera::batch_norm_scale"),
        shift_(Shape{g.channels}, "tessera::batch_norm_shift") {}

  std::string backend() const override { return "kokkos"; }

  void statistics(const Tensor& x, const Tensor& sums) override {
    check(x, "x");
    check_sums(sums);
    if (bf16()) return batch_norm_statistics<float, uint16_t>(x.half_view(), g_.rows, g_.channels, workspace_, sums.view());
    batch_norm_statistics<float>(x.view(), g_.rows, g_.channels, workspace_, sums.view());
  }

  void normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& gamma, const Tensor& beta,
                 const Tensor& y) override {
    check(x, "x");
    check(y, "y");
    batch_norm_scale_shift<float>(mean.view(), invstd.view(), gamma.view(), beta.view(), scale_.view(), shift_.view());
    normalized_ = true;
    if (bf16())
      return batch_norm_forward<float, uint16_t>(x.half_view(), g_.rows, g_.channels, channels(mean, invstd),
                                                 g_.epilogue, y.half_view());
    batch_norm_forward<float>(x.view(), g_.rows, g_.channels, channels(mean, invstd), g_.epilogue, y.view());
  }

  void backward_statistics(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                           const Tensor& sums) override {
    check(x, "x");
    check(dy, "dy");
    check_sums(sums);
    check_normalized();
    if (bf16())
      return batch_norm_backward_statistics<float, uint16_t>(x.half_view(), dy.half_view(), g_.rows, g_.channels,
                                                             channels(mean, invstd), g_.epilogue, workspace_,
                                                             sums.view());
    batch_norm_backward_statistics<float>(x.view(), dy.view(), g_.rows, g_.channels, channels(mean, invstd),
                                          g_.epilogue, workspace_, sums.view());
  }

  void backward_data(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                     const Tensor& /*gamma*/, const Tensor& sums, double count, bool batch_stats,
                     const Tensor& dx) override {
    check(x, "x");
    check(dy, "dy");
    check(dx, "dx");
    check_sums(sums);
    check_normalized();
    if (bf16())
      return batch_norm_backward_data<float, uint16_t>(x.half_view(), dy.half_view(), g_.rows, g_.channels,
                                                       channels(mean, invstd), g_.epilogue, sums.view(), count,
                                                       batch_stats, dx.half_view());
    batch_norm_backward_data<float>(x.view(), dy.view(), g_.rows, g_.channels, channels(mean, invstd), g_.epilogue,
                                    sums.view(), count, batch_stats, dx.view());
  }

 private:
  bool bf16() const { return g_.type == ElementType::bf16; }
  /// The per-channel values of the passes: scale and shift are those of the last normalize.
  BatchNormChannels<float> channels(const Tensor& mean, const Tensor& invstd) const {
    return {mean.view(), invstd.view(), scale_.view(), shift_.view()};
  }
  void check(const Tensor& t, const char* what) const {
    require_shape(t.numel() == g_.rows * g_.channels,
                  std::string("kokkos batch norm: ") + what + " of shape " + t.shape().str() + " does not hold " +
                      std::to_string(g_.rows) + " rows of " + std::to_string(g_.channels) + " channels");
    if (t.type() != g_.type)
      throw Error(std::string("kokkos batch norm: ") + what + " is " + element_type_name(t.type()) + ", expected " +
                  element_type_name(g_.type));
  }
  void check_sums(const Tensor& sums) const {
    require_shape(sums.numel() == 2 * g_.channels, "kokkos batch norm: sums of shape " + sums.shape().str() +
                                                       " should hold 2·" + std::to_string(g_.channels) + " values");
  }
  void check_normalized() const {
    if (!normalized_) throw Error("kokkos batch norm: backward called before normalize");
  }

  ops::BatchNormGeometry g_;
  ChannelSumWorkspace workspace_;
  // γ·invstd and β − mean·γ·invstd of the last normalize, which backward reuses.
  Tensor scale_, shift_;
  bool normalized_ = false;
};

}  // namespace

std::unique_ptr<ops::BatchNormOp> make_batch_norm(const ops::BatchNormGeometry& g) {
  return std::make_unique<KokkosBatchNorm>(g);
}

}  // namespace tessera::kokkos_backend
