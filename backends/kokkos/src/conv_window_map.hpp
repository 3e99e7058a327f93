#pragma once
// How a convolution's output positions read a source through their windows, for the host's
// implicit products (host_sgemm::multiply_gathered): the source copied once with zeros around
// it, so that every window lies inside it, and each output position's window read in place, a
// line at a time, instead of copied into a column matrix first.
#include <array>
#include <cstdint>
#include <vector>

#include "tessera/backends/kokkos/host_sgemm_segment.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::kokkos_backend::host_tiles {

/// Along each axis (d, h, w), output index o reads source index o·step + offset + t·tap_step
/// through tap t. The forward reads the input so (step = stride, offset = -padding, tap_step =
/// dilation); a stride-1 input gradient reads the output gradient so (1, padding, -dilation),
/// except along w, where its taps run reversed (offset = padding - (k - 1)·dilation, tap_step =
/// dilation) so that a line's taps read rising addresses.
struct WindowMap {
  int64_t batch = 0, channels = 0;
  std::array<int64_t, 3> out{}, src{}, taps{}, step{}, offset{}, tap_step{};

  /// Zeros before (lo) and after (hi) each axis of the source that every window needs.
  std::array<int64_t, 3> pad_lo() const;
  std::array<int64_t, 3> pad_hi() const;
  /// The padded source's extents.
  std::array<int64_t, 3> padded() const;
  int64_t padded_values() const;
  int64_t positions() const { return batch * out[0] * out[1] * out[2]; }
  /// Output position p (flat, channels-last order) as {n, o_d, o_h, o_w}.
  std::array<int64_t, 4> position(int64_t p) const;
};

/// How a convolution's output positions read its input (the forward, and the weight gradient's
/// window lines).
WindowMap forward_windows(const ops::ConvGeometry& g);
/// How a stride-1 convolution's input positions read its output gradient (the input gradient);
/// taps along w reversed, matching the weights' re-layout for it (conv_host_tiles.cpp).
WindowMap input_gradient_windows(const ops::ConvGeometry& g);

/// The padded copy of `src` (batch × src × channels, channels-last), on the host's threads.
void pad_source(const WindowMap& map, const float* src, float* padded);

/// The window as segments of the implicit product: each line along w one segment where its taps
/// are adjacent (tap_step 1), else one a tap. B's rows run (tap, channel), taps in d, h, w order.
std::vector<host_sgemm::Segment> window_segments(const WindowMap& map);

/// corners[r] = where output position p0 + r's window starts in the padded source.
void window_corners(const WindowMap& map, const float* padded, int64_t p0, int64_t rows, const float** corners);

}  // namespace tessera::kokkos_backend::host_tiles
