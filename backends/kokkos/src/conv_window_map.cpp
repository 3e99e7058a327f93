#include "conv_window_map.hpp"

#include <algorithm>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera::kokkos_backend::host_tiles {

std::array<int64_t, 3> WindowMap::pad_lo() const {
  std::array<int64_t, 3> lo{};
  for (int a = 0; a < 3; ++a) {
    const int64_t first = offset[a] + std::min<int64_t>(0, (taps[a] - 1) * tap_step[a]);
    lo[a] = std::max<int64_t>(0, -first);
  }
  return lo;
}

std::array<int64_t, 3> WindowMap::pad_hi() const {
  std::array<int64_t, 3> hi{};
  for (int a = 0; a < 3; ++a) {
    const int64_t last = (out[a] - 1) * step[a] + offset[a] + std::max<int64_t>(0, (taps[a] - 1) * tap_step[a]);
    hi[a] = std::max<int64_t>(0, last - (src[a] - 1));
  }
  return hi;
}

std::array<int64_t, 3> WindowMap::padded() const {
  const auto lo = pad_lo(), hi = pad_hi();
  return {lo[0] + src[0] + hi[0], lo[1] + src[1] + hi[1], lo[2] + src[2] + hi[2]};
}

int64_t WindowMap::padded_values() const {
  const auto p = padded();
  return batch * p[0] * p[1] * p[2] * channels;
}

std::array<int64_t, 4> WindowMap::position(int64_t p) const {
  const int64_t o2 = p % out[2];
  p /= out[2];
  const int64_t o1 = p % out[1];
  p /= out[1];
  return {p / out[0], p % out[0], o1, o2};
}

WindowMap forward_windows(const ops::ConvGeometry& g) {
  WindowMap map;
  map.batch = g.batch;
  map.channels = g.in_channels;
  map.out = g.out_size();
  map.src = g.in_size;
  map.taps = g.kernel;
  map.step = g.stride;
  map.offset = {-g.padding[0], -g.padding[1], -g.padding[2]};
  map.tap_step = g.dilation;
  return map;
}

WindowMap input_gradient_windows(const ops::ConvGeometry& g) {
  WindowMap map;
  map.batch = g.batch;
  map.channels = g.out_channels;
  map.out = g.in_size;
  map.src = g.out_size();
  map.taps = g.kernel;
  map.step = {1, 1, 1};
  map.offset = {g.padding[0], g.padding[1], g.padding[2] - (g.kernel[2] - 1) * g.dilation[2]};
  map.tap_step = {-g.dilation[0], -g.dilation[1], g.dilation[2]};
  return map;
}

void pad_source(const WindowMap& map, const float* src, float* padded) {
  const auto lo = map.pad_lo(), ext = map.padded();
  const int64_t c = map.channels, lines = map.batch * ext[0] * ext[1];
  const int64_t line_values = ext[2] * c, left = lo[2] * c, inner = map.src[2] * c;
  const WindowMap m = map;
  // One padded line (n, d, h) a task: zeros, the source line (or zeros past it), zeros.
  Kokkos::parallel_for("tessera::conv_pad_source", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, lines),
                       [=](const int64_t line) {
                         const int64_t h = line % ext[1] - lo[1], rest = line / ext[1];
                         const int64_t d = rest % ext[0] - lo[0], n = rest / ext[0];
                         float* out = padded + line * line_values;
                         const bool inside = d >= 0 && d < m.src[0] && h >= 0 && h < m.src[1];
                         if (!inside) {
                           for (int64_t i = 0; i < line_values; ++i) out[i] = 0.0f;
                           return;
                         }
                         const float* in = src + ((n * m.src[0] + d) * m.src[1] + h) * inner;
                         for (int64_t i = 0; i < left; ++i) out[i] = 0.0f;
                         for (int64_t i = 0; i < inner; ++i) out[left + i] = in[i];
                         for (int64_t i = left + inner; i < line_values; ++i) out[i] = 0.0f;
                       });
  Kokkos::fence();
}

std::vector<host_sgemm::Segment> window_segments(const WindowMap& map) {
  const auto ext = map.padded();
  const int64_t c = map.channels, k_w = map.taps[2];
  std::vector<host_sgemm::Segment> segments;
  for (int64_t t0 = 0; t0 < map.taps[0]; ++t0)
    for (int64_t t1 = 0; t1 < map.taps[1]; ++t1) {
      const int64_t line = t0 * map.taps[1] + t1;
      const int64_t a = ((t0 * map.tap_step[0]) * ext[1] + t1 * map.tap_step[1]) * ext[2] * c;
      if (map.tap_step[2] == 1) {
        segments.push_back({a, line * k_w * c, k_w * c});
        continue;
      }
      for (int64_t t2 = 0; t2 < k_w; ++t2) segments.push_back({a + t2 * map.tap_step[2] * c, (line * k_w + t2) * c, c});
    }
  return segments;
}

void window_corners(const WindowMap& map, const float* padded, int64_t p0, int64_t rows, const float** corners) {
  const auto lo = map.pad_lo(), ext = map.padded();
  for (int64_t r = 0; r < rows; ++r) {
    const auto [n, o0, o1, o2] = map.position(p0 + r);
    const int64_t i0 = o0 * map.step[0] + map.offset[0] + lo[0], i1 = o1 * map.step[1] + map.offset[1] + lo[1],
                  i2 = o2 * map.step[2] + map.offset[2] + lo[2];
    corners[r] = padded + (((n * ext[0] + i0) * ext[1] + i1) * ext[2] + i2) * map.channels;
  }
}

}  // namespace tessera::kokkos_backend::host_tiles
