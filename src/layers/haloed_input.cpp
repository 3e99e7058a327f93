#include "tessera/layers/haloed_input.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::layers {

parallel::HaloWidths halo_widths(const std::array<int, 3>& parts, const std::array<int64_t, 3>& block,
                                 const Window& window, const std::string& where) {
  static const char* const axis[3] = {"depth", "height", "width"};
  parallel::HaloWidths halo;
  for (size_t k = 0; k < 3; ++k) {
    if (parts[k] == 1) continue;
    const int64_t block_in = block[k], global_in = block_in * parts[k];
    const int64_t s = window.stride[k], p = window.padding[k];
    const int64_t reach = (window.kernel[k] - 1) * window.dilation[k] + 1;
    const int64_t global_out = (global_in + 2 * p - reach) / s + 1;
    // Rank r's output block [r·Lo, (r+1)·Lo) reads inputs from r·Lo·s − p on: a fixed halo
    // before every block only when each input block is exactly s·Lo long.
    const int64_t block_out = global_out / parts[k];
    if (global_out % parts[k] != 0 || block_out * s != block_in)
      throw ShapeError(where + ": cannot split " + axis[k] + " over " + std::to_string(parts[k]) +
                       " ranks: the input of " + std::to_string(global_in) + " gives an output of " +
                       std::to_string(global_out) + " with kernel " + std::to_string(window.kernel[k]) + ", stride " +
                       std::to_string(s) + ", padding " + std::to_string(p) + ", so blocks of " +
                       std::to_string(block_in) + " inputs do not map onto blocks of " + "outputs; split " + axis[k] +
                       " over fewer ranks from this layer on (its \"distribution\"), "
                       "or use padding (kernel-1)/2 with blocks divisible by the stride");
    halo.before[k] = p;
    halo.after[k] = std::max<int64_t>(0, reach - s - p);
  }
  return halo;
}

void HaloedInput::reshape(const parallel::ProcessGrid& grid, const Shape& local, const Window& window,
                          float boundary_value, const std::string& where, ElementType type) {
  require_shape(local.rank() == 4 || local.rank() == 5,
                where + ": a spatially split input must be [N, H, W, C] or [N, D, H, W, C], got " + local.str());
  boundary_value_ = boundary_value;
  type_ = type;
  region_ = "halo/" + where;
  account_region_ = where;
  local_ = local;
  const parallel::HaloWidths halo = halo_widths(grid.spatial_parts(), parallel::spatial_size_of(local), window, where);
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
