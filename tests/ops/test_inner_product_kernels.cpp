// The inner-product kernels in double: forward against a naive product, every gradient
// against central finite differences.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include "support/skip.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "support/double_views.hpp"
#include "support/gradient_check.hpp"
#include "tessera/backends/kokkos/inner_product_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/core/error.hpp"

namespace kb = tessera::kokkos_backend;
using tessera::testing::check_gradient;
using tessera::testing::device_copy;
using tessera::testing::device_matrix;
using tessera::testing::DoubleMatrix;
using tessera::testing::DoubleView;
using tessera::testing::host_copy;
using tessera::testing::random_vector;

namespace {

constexpr size_t batch = 3, in = 7, out = 5;

std::vector<double> forward(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b) {
  DoubleMatrix y("y", batch, out);
  kb::inner_product_forward<double>(device_matrix(x, batch, in), device_matrix(w, out, in), device_copy(b), y);
  return host_copy(y);
}

double weighted_sum(const std::vector<double>& y, const std::vector<double>& r) {
  double l = 0.0;
  for (size_t i = 0; i < y.size(); ++i) l += y[i] * r[i];
  return l;
}

}  // namespace

TEST_CASE("inner product forward equals x·wᵀ + b in double", "[inner_product][kernels]") {
  const auto x = random_vector<double>(batch * in, 41u);
  const auto w = random_vector<double>(out * in, 42u);
  const auto b = random_vector<double>(out, 43u);
  const auto y = forward(x, w, b);
  double worst = 0.0;
  for (size_t n = 0; n < batch; ++n)
    for (size_t o = 0; o < out; ++o) {
      double ref = b[o];
      for (size_t i = 0; i < in; ++i) ref += x[n * in + i] * w[o * in + i];
      worst = std::max(worst, std::abs(y[n * out + o] - ref));
    }
  CHECK(worst < 1e-13);

  // Without a bias.
  DoubleMatrix y0("y0", batch, out);
  kb::inner_product_forward<double>(device_matrix(x, batch, in), device_matrix(w, out, in), DoubleView(), y0);
  const auto no_bias = host_copy(y0);
  for (size_t n = 0; n < batch; ++n)
    for (size_t o = 0; o < out; ++o) CHECK(no_bias[n * out + o] == Approx(y[n * out + o] - b[o]).margin(1e-13));
}

TEST_CASE("inner product gradients match finite differences in double", "[inner_product][kernels][gradient]") {
  const auto x = random_vector<double>(batch * in, 51u);
  const auto w = random_vector<double>(out * in, 52u);
  const auto b = random_vector<double>(out, 53u);
  const auto r = random_vector<double>(batch * out, 54u);

  DoubleMatrix dx("dx", batch, in), dw("dw", out, in);
  DoubleView db("db", out);
  // Stale values must be overwritten, not accumulated into.
  Kokkos::deep_copy(dw, 100.0);
  Kokkos::deep_copy(db, 100.0);
  const DoubleMatrix dy = device_matrix(r, batch, out);
  kb::inner_product_backward_data<double>(dy, device_matrix(w, out, in), dx);
  kb::inner_product_backward_weights<double>(device_matrix(x, batch, in), dy, dw, db);

  const double h = 1e-5, floor = 1e-6;
  const auto check_x = check_gradient<double>(
      x, host_copy(dx), [&](const std::vector<double>& v) { return weighted_sum(forward(v, w, b), r); }, h, floor);
  const auto check_w = check_gradient<double>(
      w, host_copy(dw), [&](const std::vector<double>& v) { return weighted_sum(forward(x, v, b), r); }, h, floor);
  const auto check_b = check_gradient<double>(
      b, host_copy(db), [&](const std::vector<double>& v) { return weighted_sum(forward(x, w, v), r); }, h, floor);
  std::printf("[tolerance] inner_product kernels (double): dx %.3g, dw %.3g, db %.3g (limit 1e-6)\n",
              check_x.max_rel_error, check_w.max_rel_error, check_b.max_rel_error);
  INFO("dx " << check_x.str() << "\ndw " << check_w.str() << "\ndb " << check_b.str());
  CHECK(check_x.max_rel_error < 1e-6);
  CHECK(check_w.max_rel_error < 1e-6);
  CHECK(check_b.max_rel_error < 1e-6);
}

TEST_CASE("the Kokkos inner product op checks its tensors", "[inner_product][kernels]") {
  tessera::ops::InnerProductGeometry g;
  g.batch = 2;
  g.in_features = 3;
  g.out_features = 2;
  auto op = kb::make_inner_product(g);
  CHECK(op->backend() == "kokkos");
  tessera::Tensor x(tessera::Shape{2, 3}), w(tessera::Shape{2, 3}), y(tessera::Shape{2, 2});
  x.copy_from_host({1, 2, 3, 4, 5, 6});
  w.copy_from_host({1, 0, -1, 0.5f, 0.5f, 0.5f});
  op->forward(x, w, tessera::Tensor(), y);
  CHECK(y.to_host() == std::vector<float>{-2.0f, 3.0f, -2.0f, 7.5f});
  tessera::Tensor wrong(tessera::Shape{3, 3});
  CHECK_THROWS_AS(op->forward(x, wrong, tessera::Tensor(), y), tessera::ShapeError);
}

TEST_CASE("a host gemm keeps OpenBLAS on the calling thread", "[inner_product][kernels]") {
  // OpenBLAS's own pool would run beside the threads Kokkos was given (see the Kokkos
  // backend's blas_threads.hpp); after the first gemm it must use the calling thread alone.
  using GetThreads = int (*)();
  const auto get_threads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (get_threads == nullptr || std::getenv("OPENBLAS_NUM_THREADS") != nullptr) {
    TESSERA_SKIP("openblas", "no OpenBLAS linked, or OPENBLAS_NUM_THREADS set by the user: nothing to check");
  }
  forward(random_vector<double>(batch * in, 1), random_vector<double>(out * in, 2), random_vector<double>(out, 3));
  CHECK(get_threads() == 1);
}
