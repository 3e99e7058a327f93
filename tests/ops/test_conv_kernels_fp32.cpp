// The Kokkos convolution kernels in fp32 (on the host: host_sgemm's windows read in place for
// the forward and a stride-1 input gradient, its packed product for the weight gradient) against
// the same kernels in double, which test_conv_kernels.cpp checks against a direct loop and
// finite differences. Odd sizes, strides, dilations, even kernels, 2 and 3 spatial axes; one
// tile and many; outputs poisoned with NaN so that anything left unwritten shows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/conv_geometry.hpp"
#include "tessera/backends/kokkos/conv_kernels.hpp"

namespace {

using tessera::DeviceView;
using tessera::kokkos_backend::ConvWorkspace;
using tessera::ops::ConvGeometry;
using tessera::testing::conv3d;

template <class T>
DeviceView<T> to_device(const std::vector<double>& v) {
  DeviceView<T> d("v", v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (size_t i = 0; i < v.size(); ++i) h(i) = static_cast<T>(v[i]);
  Kokkos::deep_copy(d, h);
  return d;
}

template <class T>
std::vector<double> to_host(const DeviceView<T>& d) {
  auto h = Kokkos::create_mirror_view(d);
  Kokkos::deep_copy(h, d);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

struct Results {
  std::vector<double> y, dx, dw, db;
};

/// Every kernel of one geometry in T, outputs poisoned first; `budget_rows` output positions per
/// tile (0: the default workspace).
template <class T>
Results run(const ConvGeometry& g, const std::vector<double>& x, const std::vector<double>& w,
            const std::vector<double>& b, const std::vector<double>& dy, int64_t budget_rows) {
  ConvWorkspace<T> workspace = budget_rows > 0 ? ConvWorkspace<T>(sizeof(T) * static_cast<size_t>(budget_rows *
                                                                                               g.kernel_volume() *
                                                                                               g.in_channels))
                                               : ConvWorkspace<T>();
  const T poison = std::numeric_limits<T>::quiet_NaN();
  auto xd = to_device<T>(x), wd = to_device<T>(w), bd = to_device<T>(b), dyd = to_device<T>(dy);
  DeviceView<T> y("y", static_cast<size_t>(g.output_shape().numel())), dx("dx", x.size()), dw("dw", w.size()),
      db("db", b.size());
  Kokkos::deep_copy(y, poison);
  Kokkos::deep_copy(dx, poison);
  Kokkos::deep_copy(dw, poison);
  Kokkos::deep_copy(db, poison);
  tessera::kokkos_backend::conv_forward<T>(g, xd, wd, bd, y, workspace);
  tessera::kokkos_backend::conv_backward_data<T>(g, dyd, wd, dx, workspace);
  tessera::kokkos_backend::conv_backward_weights<T>(g, xd, dyd, dw, db, workspace);
  return {to_host(y), to_host(dx), to_host(dw), to_host(db)};
}

/// Largest |a - b| over the largest |b| (1 at least); NaN anywhere makes it infinite.
double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0.0, scale = 1.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
    err = std::max(err, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return err / scale;
}

ConvGeometry planar(ConvGeometry g, int rank) {
  g.spatial_rank = rank;
  g.validate("test");
  return g;
}

}  // namespace

TEST_CASE("kokkos fp32 convolutions match double on odd geometries, one tile and many", "[kokkos][conv]") {
  struct Named {
    std::string name;
    ConvGeometry g;
  };
  const std::vector<Named> geometries{
      {"3d 3->5 k3 p1, odd extents", conv3d(2, 3, 5, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
      {"3d 16->16 k3 p1 (one-vector block)", conv3d(1, 16, 16, {4, 5, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
      {"3d 20->40 k3 p1 (two-vector block, tail)",
       conv3d(1, 20, 40, {3, 4, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
      {"3d 4->8 k3 s2 p1", conv3d(2, 4, 8, {7, 6, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1})},
      {"3d 6->7 k3 p2 d2", conv3d(1, 6, 7, {6, 7, 8}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2})},
      {"3d 5->9 k2 p0 (even kernel)", conv3d(1, 5, 9, {4, 5, 6}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1})},
      {"3d 8->3 k1", conv3d(2, 8, 3, {3, 4, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1})},
      {"3d 2->6 k(1,3,5) p(0,2,1) mixed", conv3d(1, 2, 6, {3, 5, 8}, {1, 3, 5}, {1, 1, 1}, {0, 2, 1}, {1, 1, 1})},
      {"2d 3->33 k(3,5) p(1,2)", planar(conv3d(2, 3, 33, {1, 7, 9}, {1, 3, 5}, {1, 1, 1}, {0, 1, 2}, {1, 1, 1}), 2)},
      {"2d 7->17 k(1,5) p(0,3) d(1,2), one row", planar(conv3d(3, 7, 17, {1, 1, 19}, {1, 1, 5}, {1, 1, 1}, {0, 0, 3}, {1, 1, 2}), 2)},
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const auto& [name, g] : geometries) {
    auto random = [&](int64_t n) {
      std::vector<double> v(static_cast<size_t>(n));
      for (auto& e : v) e = u(rng);
      return v;
    };
    const auto x = random(g.input_shape().numel()), w = random(g.weight_shape().numel()),
               b = random(g.out_channels), dy = random(g.output_shape().numel());
    const Results ref = run<double>(g, x, w, b, dy, 0);
    for (const int64_t rows : {int64_t{0}, int64_t{5}}) {
      INFO(name << (rows ? ", tiles of 5 positions" : ", default tiles"));
      const Results f = run<float>(g, x, w, b, dy, rows);
      CHECK(relative_error(f.y, ref.y) < 2e-6);
      CHECK(relative_error(f.dx, ref.dx) < 2e-6);
      CHECK(relative_error(f.dw, ref.dw) < 2e-6);
      CHECK(relative_error(f.db, ref.db) < 2e-6);
    }
  }
}
