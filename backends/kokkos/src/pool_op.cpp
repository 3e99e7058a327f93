#include <utility>

#include "fp32_staging.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/backends/kokkos/pool_kernels.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kokkos_backend {
namespace {

/// The portable PoolOp. Max pooling keeps the argmax of its last forward (grow-only storage)
/// for the backward pass. A bf16 layer max-pools its bf16 values directly where the windows
/// tile the input (the pooling of CNNs), and otherwise pools fp32 copies (fp32_staging.hpp): a
/// max is exact either way, an average rounded once.
class KokkosPoolOp final : public ops::PoolOp {
 public:
  explicit KokkosPoolOp(const ops::PoolGeometry& g) : g_(g), staging_(g.type) {}

  std::string backend() const override { return "kokkos"; }

  void forward(const Tensor& x, const Tensor& y) override {
    check(x, g_.input_shape(), "input");
    check(y, g_.output_shape(), "output");
    if (bf16_max() && max_pool_forward_bf16(g_, half(x), half(y), ensure_argmax())) {
      have_argmax_ = true;
      return;
    }
    const Tensor& xa = staging_.widened(x_, x);
    const Tensor& ya = staging_.output(y_, y);
    if (g_.kind == ops::PoolKind::average) {
      avg_pool_forward<float>(g_, flat(xa), flat(ya));
    } else {
      max_pool_forward<float>(g_, flat(xa), flat(ya), ensure_argmax());
      have_argmax_ = true;
    }
    staging_.store(y, ya);
  }

  void backward(const Tensor& x, const Tensor& dy, const Tensor& dx) override {
    check(x, g_.input_shape(), "input");
    check(dy, g_.output_shape(), "output gradient");
    check(dx, g_.input_shape(), "input gradient");
    if (g_.kind == ops::PoolKind::max && !have_argmax_)
      throw Error("kokkos pooling " + g_.str() + ": backward called before forward");
    if (bf16_max() && max_pool_backward_bf16(g_, half(dy), argmax_, half(dx))) return;
    const Tensor& dya = staging_.widened(y_, dy);
    const Tensor& dxa = staging_.output(x_, dx);
    if (g_.kind == ops::PoolKind::average)
      avg_pool_backward<float>(g_, flat(dya), flat(dxa));
    else
      max_pool_backward<float>(g_, flat(dya), argmax_, flat(dxa));
    staging_.store(dx, dxa);
  }

 private:
  void check(const Tensor& t, const Shape& expected, const char* what) const {
    if (!t.empty() && t.type() != g_.type)
      throw Error("kokkos pooling " + g_.str() + ": " + what + " is " + element_type_name(t.type()) + ", expected " +
                  element_type_name(g_.type));
    if (t.empty() || t.numel() != expected.numel())
      throw ShapeError("kokkos pooling " + g_.str() + ": " + what + " has shape " + t.shape().str() + ", expected " +
                       expected.str());
  }
  /// bf16 max pooling, which runs on the bf16 values themselves where the windows tile.
  bool bf16_max() const { return g_.type == ElementType::bf16 && g_.kind == ops::PoolKind::max; }
  static DeviceView<uint16_t> half(const Tensor& t) {
    return Kokkos::subview(t.half_view(), std::make_pair<int64_t, int64_t>(0, t.numel()));
  }
  const PoolArgmax& ensure_argmax() {
    const auto outputs = static_cast<size_t>(g_.output_shape().numel());
    if (argmax_.extent(0) < outputs)
      argmax_ = PoolArgmax(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::max_pool_argmax"), outputs);
    return argmax_;
  }
  static DeviceView<float> flat(const Tensor& t) {
    return Kokkos::subview(t.view(), std::make_pair<int64_t, int64_t>(0, t.numel()));
  }

  ops::PoolGeometry g_;
  PoolArgmax argmax_;
  bool have_argmax_ = false;
  Fp32Staging staging_;
  // A bf16 layer's fp32 copies: x or dx, y or dy.
  Tensor x_, y_;
};

}  // namespace

std::unique_ptr<ops::PoolOp> make_pool(const ops::PoolGeometry& g) {
  g.validate("kokkos backend");
  return std::make_unique<KokkosPoolOp>(g);
}

}  // namespace tessera::kokkos_backend
