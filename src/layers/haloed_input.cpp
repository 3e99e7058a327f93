#include "tessera/layers/haloed_input.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::layers {

namespace {

const char* const halo_axis_names[3] = {"depth", "height", "width"};

/// Outputs a window produces from `extent` inputs without padding.
int64_t outputs_of(int64_t extent, int64_t reach, int64_t stride) {
  return extent < reach ? 0 : (extent - reach) / stride + 1;
}

}  // namespace

parallel::HaloWidths halo_widths(const std::array<int, 3>& parts, const std::array<int64_t, 3>& whole,
                                 const parallel::SpatialAlignment& alignment, const Window& window,
                                 const std::string& where) {
  parallel::HaloWidths halo;
  for (size_t k = 0; k < 3; ++k) {
    const int P = parts[k];
    if (P == 1) continue;
    const int64_t in = whole[k], s = window.stride[k], p = window.padding[k];
    const int64_t reach = (window.kernel[k] - 1) * window.dilation[k] + 1;
    const int64_t out = outputs_of(in + 2 * p, reach, s);
    const std::string layout = std::string("cannot split ") + halo_axis_names[k] + " over " + std::to_string(P) +
                               " ranks: the input of " + std::to_string(in) + " gives an output of " +
                               std::to_string(out) + " with kernel " + std::to_string(window.kernel[k]) + ", stride " +
                               std::to_string(s) + ", padding " + std::to_string(p);
    for (const int64_t extent : {in, out})
      if (!alignment.fits(k, extent, P))
        throw ShapeError(where + ": " + layout + "; " + alignment.explain(k, extent, P));
    // Rank i's outputs [o_i, o_i+1) read inputs from s·o_i − p on: with a halo of p before
    // every block and reach − s − p after it, the op on each haloed block gives exactly its
    // outputs when every input block starts at s times where its output block starts.
    halo.before[k] = p;
    halo.after[k] = std::max<int64_t>(0, reach - s - p);
    for (int i = 0; i < P; ++i) {
      const int64_t in_first = alignment.boundary(k, in, P, i), in_last = alignment.boundary(k, in, P, i + 1);
      const int64_t out_first = alignment.boundary(k, out, P, i), out_last = alignment.boundary(k, out, P, i + 1);
      const int64_t block = in_last - in_first;
      const bool aligned = in_first == s * out_first &&
                           outputs_of(block + halo.before[k] + halo.after[k], reach, s) == out_last - out_first;
      // A halo comes from the next block only, so each block must be at least as wide.
      const bool halos_fit = (i == 0 || halo.after[k] <= block) && (i == P - 1 || halo.before[k] <= block);
      if (!aligned || !halos_fit)
        throw ShapeError(where + ": " + layout + ", so rank " + std::to_string(i) + "'s inputs [" +
                         std::to_string(in_first) + ", " + std::to_string(in_last) + ") " +
                         (aligned ? "are narrower than the halo its neighbours need (" + halo.str() + ")"
                                  : "do not give its outputs [" + std::to_string(out_first) + ", " +
                                        std::to_string(out_last) + ")") +
                         "; split " + halo_axis_names[k] +
                         " over fewer ranks from this layer on (its \"distribution\"), or use padding "
                         "(kernel-1)/2 with an input whose extent the stride divides");
    }
  }
  return halo;
}

void HaloedInput::reshape(const parallel::ProcessGrid& grid, const Shape& local, const std::array<int64_t, 3>& whole,
                          const Window& window, float boundary_value, const std::string& where, ElementType type) {
  require_shape(local.rank() == 4 || local.rank() == 5,
                where + ": a spatially split input must be [N, H, W, C] or [N, D, H, W, C], got " + local.str());
  boundary_value_ = boundary_value;
  type_ = type;
  region_ = "halo/" + where;
  account_region_ = where;
  local_ = local;
  const parallel::HaloWidths halo = halo_widths(grid.spatial_parts(), whole, *grid.alignment(), window, where);
  op_padding_ = window.padding;
  for (size_t k = 0; k < 3; ++k)
    if (grid.spatial_parts()[k] > 1) op_padding_[k] = 0;
  widths_ = halo;
  active_ = halo.any();
  if (!active_) {
    op_shape_ = local;
    exchange_ = parallel::HaloExchange();
    padded_ = grad_padded_ = Tensor();
    return;
  }
  exchange_ = parallel::HaloExchange(grid, local, halo, where, type);
  op_shape_ = exchange_.padded_shape();
  label_ = where;
  ensure_shape(padded_, op_shape_, where + ".haloed_input", type);
  if (!grad_padded_.empty()) ensure_shape(grad_padded_, op_shape_, where + ".haloed_input_grad", type);
}

const Tensor& HaloedInput::grad_buffer(const Tensor& dx) {
  if (!active_) return dx;
  if (grad_padded_.empty()) ensure_shape(grad_padded_, op_shape_, label_ + ".haloed_input_grad", type_);
  return grad_padded_;
}

const Tensor& HaloedInput::gather(const Tensor& x) {
  start_gather(x);
  finish_gather();
  return gathered(x);
}

void HaloedInput::start_gather(const Tensor& x) {
  if (!active_) return;
  ProfileRegion region(region_);
  exchange_.start_forward(x, padded_, boundary_value_);
  // A neighbour that posted first has its messages waiting: take them before computing.
  exchange_.progress();
}

void HaloedInput::finish_gather() {
  if (!active_) return;
  ProfileRegion region(region_);
  const parallel::HaloAccount before = exchange_.account();
  exchange_.finish_forward();
  record_account(before);
}

void HaloedInput::record_account(const parallel::HaloAccount& before) const {
  // Time blocked on messages alone (no packing or copies), and how much of it was
  // communication rather than a late neighbour (HaloAccount).
  auto& profiler = Profiler::instance();
  if (!profiler.enabled()) return;
  const parallel::HaloAccount a = exchange_.account() - before;
  profiler.add("halo_wait/" + account_region_, a.blocked);
  profiler.add("halo_exposed/" + account_region_, a.exposed);
  profiler.add("halo_in_flight/" + account_region_, a.in_flight);
}

void HaloedInput::start_scatter(const Tensor& dx) {
  if (!active_) return;
  ProfileRegion region(region_);
  exchange_.start_backward(grad_padded_, dx);
  exchange_.progress();
}

void HaloedInput::finish_scatter() {
  if (!active_) return;
  ProfileRegion region(region_);
  const parallel::HaloAccount before = exchange_.account();
  exchange_.finish_backward();
  record_account(before);
}

}  // namespace tessera::layers
