#pragma once
// Host <-> device copies of double vectors, for kernel tests run in double precision.
#include <vector>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::testing {

using DoubleView = Kokkos::View<double*, Kokkos::LayoutRight, MemSpace>;
using DoubleMatrix = Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>;

inline DoubleView device_copy(const std::vector<double>& host) {
  DoubleView v("test_double", host.size());
  Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(host.data(), host.size());
  Kokkos::deep_copy(v, h);
  return v;
}

inline DoubleMatrix device_matrix(const std::vector<double>& host, size_t rows, size_t cols) {
  DoubleMatrix m("test_double_matrix", rows, cols);
  Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
      host.data(), rows, cols);
  Kokkos::deep_copy(m, h);
  return m;
}

template <class View>
std::vector<double> host_copy(const View& v) {
  std::vector<double> out(v.size());
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(out.data(), out.size());
  Kokkos::deep_copy(h, Kokkos::View<const double*, Kokkos::LayoutRight, MemSpace>(v.data(), v.size()));
  return out;
}

}  // namespace tessera::testing
