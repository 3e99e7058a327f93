// Per-op throughput of every compiled-in backend on the convolution shapes of
// cosmoflow-small (docs/benchmarks.md): forward, backward-data and backward-weights GFLOP/s.
// Usage: tessera_bench_ops [--size S] [--batch N] [--reps R] [--backend NAME]
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/core/rng.hpp"
#include "tessera/registry/backend_registry.hpp"

using namespace tessera;

namespace {
double median_seconds(int reps, const std::function<void()>& f) {
  f();  // warm-up: primitive creation, workspace allocation
  Kokkos::fence();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
/// Counter-based uniform values in [-scale, scale).
void fill_uniform(const Tensor& t, float scale, uint64_t stream) {
  auto v = t.view();
  Kokkos::parallel_for("bench::fill", RangePolicy(0, t.numel()), KOKKOS_LAMBDA(const int64_t i) {
    v(i) = scale * (2.0f * rng::uniform(42, stream, static_cast<uint64_t>(i)) - 1.0f);
  });
}
}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int64_t size = 64, batch = 4;
  int reps = 5;
  std::vector<std::string> backends = registry::available_backends();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size")) size = std::stoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch")) batch = std::stoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--backend")) backends = {argv[i + 1]};
    else {
      std::fprintf(stderr, "usage: %s [--size S] [--batch N] [--reps R] [--backend NAME]\n", argv[0]);
      return 2;
    }
  }
  const int64_t chans[] = {4, 32, 64, 128, 256, 256};
  std::printf("cosmoflow-small conv shapes, S=%lld batch=%lld threads=%d (median of %d)\n",
              static_cast<long long>(size), static_cast<long long>(batch), Kokkos::DefaultExecutionSpace().concurrency(),
              reps);
  std::printf("%-8s %-22s %10s %10s %10s\n", "backend", "layer", "fwd GF/s", "bwd_d GF/s", "bwd_w GF/s");
  for (const auto& name : backends) {
    double total_flops = 0, total_time = 0;
    int64_t s = size;
    for (int l = 0; l < 5; ++l, s /= 2) {
      ops::ConvGeometry g;
      g.batch = batch;
      g.in_channels = chans[l];
      g.out_channels = chans[l + 1];
      g.in_size = {s, s, s};
      g.kernel = {3, 3, 3};
      g.padding = {1, 1, 1};
      auto op = registry::backend(name).make_conv(g);
      if (!op) {
        std::printf("%-8s conv%d: not supported\n", name.c_str(), l + 1);
        continue;
      }
      Tensor x(g.input_shape()), w(g.weight_shape()), b(Shape{g.out_channels}), y(g.output_shape());
      Tensor dx(g.input_shape()), dw(g.weight_shape()), db(Shape{g.out_channels});
      // Realistic values: constant inputs can take faster paths than training data does.
      fill_uniform(x, 1.0f, 1);
      fill_uniform(w, 1.0f / std::sqrt(static_cast<float>(g.kernel_volume() * g.in_channels)), 2);
      fill_uniform(b, 0.1f, 3);
      const double flops = g.forward_flops();
      const double tf = median_seconds(reps, [&] { op->forward(x, w, b, y); });
      const double td = median_seconds(reps, [&] { op->backward_data(y, w, dx); });
      const double tw = median_seconds(reps, [&] { op->backward_weights(x, y, dw, db); });
      char label[64];
      std::snprintf(label, sizeof label, "conv%d %lld->%lld @%lld^3", l + 1, static_cast<long long>(g.in_channels),
                    static_cast<long long>(g.out_channels), static_cast<long long>(s));
      std::printf("%-8s %-22s %10.1f %10.1f %10.1f\n", name.c_str(), label, flops / tf / 1e9, flops / td / 1e9,
                  flops / tw / 1e9);
      // Training work: the first layer needs no backward-data.
      total_flops += flops * (l == 0 ? 2 : 3);
      total_time += tf + tw + (l == 0 ? 0 : td);
    }
    std::printf("%-8s training conv work: %.1f GFLOP/s, conv-bound limit %.2f samples/s\n", name.c_str(),
                total_flops / total_time / 1e9, batch / total_time);
  }
  return 0;
}
