// host_sgemm, every kernel this CPU runs (each instruction set, wide and narrow blocks), against
// a double-precision product on odd sizes: A in either layout, C with a leading dimension past n,
// accumulating or not, C's untouched columns poisoned.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tessera/backends/kokkos/host_sgemm.hpp"

namespace {

namespace hs = tessera::kokkos_backend::host_sgemm;

struct Case {
  int64_t m, n, k;
};

void check_product(hs::Isa isa, const Case& s, bool a_rows_contiguous, bool accumulate) {
  std::mt19937 rng(static_cast<unsigned>(s.m * 131 + s.n * 17 + s.k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // A with gaps between its rows (or columns), so strides are exercised, not assumed.
  const int64_t ras = a_rows_contiguous ? s.k + 3 : 1, cas = a_rows_contiguous ? 1 : s.m + 2;
  std::vector<float> a(static_cast<size_t>(a_rows_contiguous ? s.m * ras : s.k * cas));
  for (auto& v : a) v = u(rng);
  const int64_t ldb = s.n + 5, ldc = s.n + 4;
  std::vector<float> b(static_cast<size_t>(s.k * ldb));
  for (auto& v : b) v = u(rng);
  std::vector<float> bt(static_cast<size_t>(s.n * (s.k + 1)));
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j) bt[j * (s.k + 1) + p] = b[p * ldb + j];
  const float poison = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> c(static_cast<size_t>(s.m * ldc), poison), c0(c.size());
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) c[i * ldc + j] = accumulate ? u(rng) : poison;
  c0 = c;

  const hs::Kernel kernel = hs::choose(isa, s.n);
  std::vector<float> panels(static_cast<size_t>(hs::packed_b_size(kernel, s.k, s.n)), poison);
  if (a_rows_contiguous)
    hs::pack_b(kernel, s.k, s.n, b.data(), ldb, 1, panels.data());
  else  // B read through its transpose's layout: the same numbers, the other strides
    hs::pack_b(kernel, s.k, s.n, bt.data(), 1, s.k + 1, panels.data());
  hs::multiply(kernel, s.m, s.n, s.k, a.data(), ras, cas, panels.data(), c.data(), ldc, accumulate);

  INFO("isa " << hs::name(isa) << " block " << kernel.mr << "x" << kernel.nr << " m " << s.m << " n " << s.n
              << " k " << s.k << (a_rows_contiguous ? " A rows" : " A columns")
              << (accumulate ? " accumulate" : ""));
  int64_t wrong = 0, untouched_changed = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = accumulate ? c0[i * ldc + j] : 0.0, scale = std::fabs(sum);
      for (int64_t p = 0; p < s.k; ++p) {
        const double x = a[i * ras + p * cas], y = b[p * ldb + j];
        sum += x * y;
        scale += std::fabs(x * y);
      }
      const double got = c[i * ldc + j];
      if (!(std::fabs(got - sum) <= 4e-7 * (scale + 1.0) * std::sqrt(double(s.k) + 1.0))) ++wrong;
    }
    for (int64_t j = s.n; j < ldc; ++j)
      if (!std::isnan(c[i * ldc + j])) ++untouched_changed;
  }
  CHECK(wrong == 0);
  CHECK(untouched_changed == 0);
}

}  // namespace

TEST_CASE("host_sgemm: every runnable kernel matches a double product on odd sizes", "[kokkos][host_sgemm]") {
  const std::vector<Case> cases{{1, 1, 1},   {7, 5, 3},    {13, 33, 200}, {37, 17, 385},
                                {8, 32, 192}, {50, 64, 500}, {3, 100, 7},  {29, 16, 1}};
  const auto isas = hs::runnable();
  REQUIRE(!isas.empty());
  CHECK(isas.front() == hs::Isa::build);
  CHECK(isas.back() == hs::widest());
  for (const hs::Isa isa : isas)
    for (const Case& s : cases)
      for (const bool rows : {true, false})
        for (const bool accumulate : {false, true}) check_product(isa, s, rows, accumulate);
}

TEST_CASE("host_sgemm: a kernel this CPU does not run is refused, by name", "[kokkos][host_sgemm]") {
  const auto isas = hs::runnable();
  for (const hs::Isa isa : {hs::Isa::avx2, hs::Isa::avx512})
    if (std::find(isas.begin(), isas.end(), isa) == isas.end())
      CHECK_THROWS_WITH(hs::choose(isa, 16), Catch::Contains(hs::name(isa)));
  CHECK_NOTHROW(hs::choose(hs::Isa::build, 16));
}

TEST_CASE("host_sgemm: an empty k gives zeros, or leaves C when accumulating", "[kokkos][host_sgemm]") {
  for (const hs::Isa isa : hs::runnable()) {
    const hs::Kernel kernel = hs::choose(isa, 3);
    std::vector<float> c{1, 2, 3, 4, 5, 6};
    hs::multiply(kernel, 2, 3, 0, nullptr, 0, 1, nullptr, c.data(), 3, true);
    CHECK(c == std::vector<float>{1, 2, 3, 4, 5, 6});
    hs::multiply(kernel, 2, 3, 0, nullptr, 0, 1, nullptr, c.data(), 3, false);
    CHECK(c == std::vector<float>(6, 0.0f));
  }
}

TEST_CASE("host_sgemm: the same product gives the same bits on every call", "[kokkos][host_sgemm]") {
  const int64_t m = 40, n = 48, k = 700;
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  const hs::Kernel kernel = hs::choose(hs::widest(), n);
  std::vector<float> panels(static_cast<size_t>(hs::packed_b_size(kernel, k, n)));
  hs::pack_b(kernel, k, n, b.data(), n, 1, panels.data());
  std::vector<float> c1(m * n), c2(m * n);
  hs::multiply(kernel, m, n, k, a.data(), k, 1, panels.data(), c1.data(), n, false);
  // The rows in two calls: a block's sums must not depend on which rows share its call.
  hs::multiply(kernel, 19, n, k, a.data(), k, 1, panels.data(), c2.data(), n, false);
  hs::multiply(kernel, m - 19, n, k, a.data() + 19 * k, k, 1, panels.data(), c2.data() + 19 * n, n, false);
  CHECK(c1 == c2);
}

TEST_CASE("host_sgemm: the gathered products match a double product for every runnable kernel",
          "[kokkos][host_sgemm]") {
  // A source buffer that rows point into at scattered places, segments of odd lengths at odd
  // offsets (as a window's lines are), B for every segment's rows.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> source(4000);
  for (auto& v : source) v = u(rng);
  const std::vector<hs::Segment> segments{{0, 0, 7}, {301, 7, 19}, {-50, 26, 1}, {777, 27, 40}};
  const int64_t k = 67;  // the segments' lengths
  for (const hs::Isa isa : hs::runnable())
    for (const int64_t m : {int64_t{1}, int64_t{13}, int64_t{40}})
      for (const int64_t n : {int64_t{5}, int64_t{16}, int64_t{37}}) {
        INFO("isa " << hs::name(isa) << " m " << m << " n " << n);
        std::vector<const float*> rows(static_cast<size_t>(m));
        for (int64_t i = 0; i < m; ++i) rows[static_cast<size_t>(i)] = source.data() + 60 + (i * 37) % 2000;
        std::vector<float> b(static_cast<size_t>(k * n));
        for (auto& v : b) v = u(rng);
        const hs::Kernel kernel = hs::choose(isa, n);
        std::vector<float> panels(static_cast<size_t>(hs::packed_b_size(kernel, k, n)));
        hs::pack_b(kernel, k, n, b.data(), n, 1, panels.data());
        std::vector<float> c(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
        hs::multiply_gathered(kernel, m, n, rows.data(), segments.data(), static_cast<int64_t>(segments.size()),
                              panels.data(), k, c.data(), n, false);
        int64_t wrong = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0.0, scale = 1.0;
            for (const hs::Segment& seg : segments)
              for (int64_t t = 0; t < seg.length; ++t) {
                const double x = rows[static_cast<size_t>(i)][seg.a_offset + t] * double(b[(seg.b_row + t) * n + j]);
                sum += x;
                scale += std::fabs(x);
              }
            if (!(std::fabs(c[i * n + j] - sum) <= 1e-6 * scale)) ++wrong;
          }
        CHECK(wrong == 0);

        // Gathered B: C (m x n) += A(i, p) · rows_b[p][offset + j], A's columns contiguous.
        const int64_t kp = 29, col_stride = m + 3;
        std::vector<float> a(static_cast<size_t>(kp * col_stride));
        for (auto& v : a) v = u(rng);
        std::vector<const float*> b_rows(static_cast<size_t>(kp));
        for (int64_t p = 0; p < kp; ++p) b_rows[static_cast<size_t>(p)] = source.data() + 100 + (p * 53) % 3000;
        const int64_t offset = 11;
        std::vector<float> c2(static_cast<size_t>(m * n)), c0(c2.size());
        for (auto& v : c2) v = u(rng);
        c0 = c2;
        hs::multiply_gathered_b(kernel, m, n, kp, a.data(), col_stride, b_rows.data(), offset, c2.data(), n, true);
        wrong = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = c0[i * n + j], scale = 1.0 + std::fabs(sum);
            for (int64_t p = 0; p < kp; ++p) {
              const double x = double(a[p * col_stride + i]) * b_rows[static_cast<size_t>(p)][offset + j];
              sum += x;
              scale += std::fabs(x);
            }
            if (!(std::fabs(c2[i * n + j] - sum) <= 1e-6 * scale)) ++wrong;
          }
        CHECK(wrong == 0);
      }
}
