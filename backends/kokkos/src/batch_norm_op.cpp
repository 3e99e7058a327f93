// The Kokkos reference batch norm: the templated kernels of batch_norm_kernels.hpp in float,
// on fp32 or bf16 activations (statistics, parameters and arithmetic fp32 either way).
#include "tessera/backends/kokkos/batch_norm_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

class KokkosBatchNorm final : public ops::BatchNormOp {
 public:
  explicit KokkosBatchNorm(const ops::BatchNormGeometry& g)
      : g_(g), workspace_(make_channel_sum_workspace(g.rows, g.channels)) {}

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
    if (bf16())
      return batch_norm_normalize<float, uint16_t>(x.half_view(), g_.rows, g_.channels, mean.view(), invstd.view(),
                                                   gamma.view(), beta.view(), y.half_view());
    batch_norm_normalize<float>(x.view(), g_.rows, g_.channels, mean.view(), invstd.view(), gamma.view(), beta.view(),
                                y.view());
  }

  void backward_statistics(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd,
                           const Tensor& sums) override {
    check(x, "x");
    check(dy, "dy");
    check_sums(sums);
    if (bf16())
      return batch_norm_backward_statistics<float, uint16_t>(x.half_view(), dy.half_view(), g_.rows, g_.channels,
                                                             mean.view(), invstd.view(), workspace_, sums.view());
    batch_norm_backward_statistics<float>(x.view(), dy.view(), g_.rows, g_.channels, mean.view(), invstd.view(),
                                          workspace_, sums.view());
  }

  void backward_data(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& invstd, const Tensor& gamma,
                     const Tensor& sums, double count, bool batch_stats, const Tensor& dx) override {
    check(x, "x");
    check(dy, "dy");
    check(dx, "dx");
    check_sums(sums);
    if (bf16())
      return batch_norm_backward_data<float, uint16_t>(x.half_view(), dy.half_view(), g_.rows, g_.channels,
                                                       mean.view(), invstd.view(), gamma.view(), sums.view(), count,
                                                       batch_stats, dx.half_view());
    batch_norm_backward_data<float>(x.view(), dy.view(), g_.rows, g_.channels, mean.view(), invstd.view(), gamma.view(),
                                    sums.view(), count, batch_stats, dx.view());
  }

 private:
  bool bf16() const { return g_.type == ElementType::bf16; }
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

  ops::BatchNormGeometry g_;
  ChannelSumWorkspace workspace_;
};

}  // namespace

std::unique_ptr<ops::BatchNormOp> make_batch_norm(const ops::BatchNormGeometry& g) {
  return std::make_unique<KokkosBatchNorm>(g);
}

}  // namespace tessera::kokkos_backend
