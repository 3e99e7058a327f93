#include "tessera/layers/halo_overlapped_conv.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::layers {
namespace {

const char* const axis_names[3] = {"depth", "height", "width"};

/// Per spatial axis: the output range [first, end) whose windows stay inside the block, for
/// axes with a halo; the whole output elsewhere.
struct InteriorRanges {
  std::array<int64_t, 3> first{0, 0, 0}, end{0, 0, 0}, outputs{0, 0, 0};
  std::array<bool, 3> haloed{false, false, false};
  std::string missing;  // why there is no interior, when there is none
};

int64_t reach_of(const ops::ConvGeometry& g, size_t k) { return (g.kernel[k] - 1) * g.dilation[k] + 1; }

InteriorRanges interior_ranges(const ops::ConvGeometry& g, const parallel::HaloWidths& halo) {
  InteriorRanges r;
  r.outputs = g.out_size();
  for (size_t k = 0; k < 3; ++k) {
    r.haloed[k] = halo.before[k] + halo.after[k] > 0;
    r.end[k] = r.outputs[k];
    if (!r.haloed[k]) continue;
    // The haloed input holds rows [0, before) of halo, the block's rows, then `after` rows of
    // halo; output row o reads rows [o·s, o·s + reach) (no padding along a split axis).
    const int64_t before = halo.before[k], s = g.stride[k], reach = reach_of(g, k);
    const int64_t block = g.in_size[k] - before - halo.after[k];
    const int64_t last_input = before + block - reach;  // last first-row of a window inside the block
    r.first[k] = (before + s - 1) / s;
    r.end[k] = last_input >= 0 ? last_input / s + 1 : 0;
    if (r.end[k] <= r.first[k] && r.missing.empty())
      r.missing = std::string("no output's window lies inside the block along ") + axis_names[k] + " (block of " +
                  std::to_string(block) + ", window of " + std::to_string(reach) + ")";
  }
  return r;
}

/// Whether a box of an [N, D, H, W, C] array is one contiguous run per sample: the axes inside
/// the innermost one it cuts are whole, and those outside it (within a sample) one wide.
bool contiguous_per_sample(const parallel::Index5& extent, const parallel::Index5& array) {
  size_t cut = 4;
  while (cut > 0 && extent[cut] == array[cut]) --cut;
  for (size_t j = 1; j < cut; ++j)
    if (extent[j] != 1) return false;
  return true;
}

/// Row-major offset of `index` in an array of extents `e`.
int64_t offset_of(const parallel::Index5& index, const parallel::Index5& e) {
  int64_t o = 0;
  for (size_t k = 0; k < 5; ++k) o = o * e[k] + index[k];
  return o;
}

std::string box_str(const std::array<int64_t, 3>& e, int spatial_rank) {
  std::string s;
  for (size_t k = spatial_rank == 2 ? 1 : 0; k < 3; ++k) s += (s.empty() ? "" : "x") + std::to_string(e[k]);
  return s;
}

}  // namespace

HaloOverlappedConv::Verdict HaloOverlappedConv::pays_off(const ops::ConvGeometry& haloed,
                                                         const parallel::HaloWidths& halo) {
  Verdict v;
  if (!halo.any()) {
    v.reason = "no halo to overlap";
    return v;
  }
  const InteriorRanges r = interior_ranges(haloed, halo);
  if (!r.missing.empty()) {
    v.reason = r.missing;
    return v;
  }
  std::array<int64_t, 3> interior{};
  int shell_pieces = 0;
  v.interior_share = 1.0;
  for (size_t k = 0; k < 3; ++k) {
    interior[k] = r.end[k] - r.first[k];
    v.interior_share *= static_cast<double>(interior[k]) / static_cast<double>(r.outputs[k]);
    shell_pieces += (r.first[k] > 0) + (r.end[k] < r.outputs[k]);
  }
  const long percent = std::lround(100.0 * v.interior_share);
  v.reason = "interior " + box_str(interior, haloed.spatial_rank) + " of " + box_str(r.outputs, haloed.spatial_rank) +
             " outputs (" + std::to_string(percent) + "%), " + std::to_string(shell_pieces) + " shell pieces";
  if (v.interior_share < min_interior_share) {
    v.reason += ": too little interior to hide the halos behind";
    return v;
  }
  if (haloed.forward_flops() < min_flops) {
    v.reason += ": too little work to split (" + std::to_string(std::lround(haloed.forward_flops() / 1e6)) + " MFLOP)";
    return v;
  }
  // Pieces run in place when they are contiguous per sample: halos along one axis only, with
  // every spatial axis outside it one wide (a depth split; a height split in 2D).
  int haloed_axes = 0;
  bool outer_axes_unit = true;
  for (size_t k = 0; k < 3; ++k) {
    if (r.haloed[k]) {
      ++haloed_axes;
      continue;
    }
    if (haloed_axes == 0 && (haloed.in_size[k] != 1 || r.outputs[k] != 1)) outer_axes_unit = false;
  }
  v.needs_buffers = haloed_axes > 1 || !outer_axes_unit;
  if (v.needs_buffers) {
    const double mib =
        static_cast<double>(haloed.output_shape().numel()) * static_cast<double>(element_size(haloed.type)) / (1 << 20);
    v.reason += ": its pieces would need buffers of about one output block (" + std::to_string(std::lround(mib)) +
                " MiB), memory a spatial split exists to save (halo_overlap \"always\" overlaps anyway)";
    return v;
  }
  v.pays = true;
  return v;
}

void HaloOverlappedConv::reshape(const ops::ConvGeometry& haloed, const parallel::HaloWidths& halo, bool always,
                                 const registry::OpFactory& ops, const std::string& layer, const std::string& where) {
  pieces_.clear();
  verdict_ = pays_off(haloed, halo);
  const InteriorRanges r = interior_ranges(haloed, halo);
  if (always && !verdict_.pays && halo.any() && r.missing.empty()) {
    verdict_.pays = true;
    // The hint that "always" would overlap is moot now that it has.
    const std::string hint = " (halo_overlap \"always\" overlaps anyway)";
    if (const size_t at = verdict_.reason.find(hint); at != std::string::npos) verdict_.reason.erase(at, hint.size());
    verdict_.reason += " (overlapped anyway: halo_overlap \"always\")";
  }
  if (!verdict_.pays) return;
  const auto out = haloed.out_size();
  auto make = [&](const std::array<int64_t, 3>& first, const std::array<int64_t, 3>& end) {
    return make_piece(haloed, halo, r.haloed, first, end, ops, layer, where);
  };

  // The interior first; then per haloed axis the slabs before and after it, each restricted
  // to the interior along the axes before it (so no output is computed twice).
  pieces_.push_back(make(r.first, r.end));
  std::array<int64_t, 3> first{0, 0, 0}, end = out;
  for (size_t k = 0; k < 3; ++k) {
    if (!r.haloed[k]) continue;
    if (r.first[k] > 0) {
      auto f = first, e = end;
      f[k] = 0, e[k] = r.first[k];
      pieces_.push_back(make(f, e));
    }
    if (r.end[k] < out[k]) {
      auto f = first, e = end;
      f[k] = r.end[k], e[k] = out[k];
      pieces_.push_back(make(f, e));
    }
    first[k] = r.first[k], end[k] = r.end[k];
  }
}

HaloOverlappedConv::Piece HaloOverlappedConv::make_piece(
    const ops::ConvGeometry& haloed, const parallel::HaloWidths& halo, const std::array<bool, 3>& haloed_axes,
    const std::array<int64_t, 3>& first, const std::array<int64_t, 3>& end, const registry::OpFactory& ops,
    const std::string& layer, const std::string& where) {
  const auto out = haloed.out_size();
  Piece p;
  ops::ConvGeometry g = haloed;
  p.out_offset = {0, first[0], first[1], first[2], 0};
  p.out_extent = {haloed.batch, end[0] - first[0], end[1] - first[1], end[2] - first[2], haloed.out_channels};
  p.in_offset = {0, 0, 0, 0, 0};
  p.in_extent = {haloed.batch, haloed.in_size[0], haloed.in_size[1], haloed.in_size[2], haloed.in_channels};
  // Its input box follows from the window.
  bool block = true;
  for (size_t k = 0; k < 3; ++k) {
    const bool whole = first[k] == 0 && end[k] == out[k];
    if (!haloed_axes[k]) {
      // The op's own padding (unsplit axis) or no window overlap: the whole extent, as is.
      require_shape(whole, where + ": an overlap piece cut along " + axis_names[k] + ", which has no halo");
      continue;
    }
    const int64_t from = first[k] * haloed.stride[k];
    const int64_t to = (end[k] - 1) * haloed.stride[k] + reach_of(haloed, k);
    p.in_offset[k + 1] = from;
    p.in_extent[k + 1] = to - from;
    g.in_size[k] = to - from;
    block = block && from == halo.before[k] && to == haloed.in_size[k] - halo.after[k];
  }
  g.validate(where);
  require_shape(
      g.out_size()[0] == p.out_extent[1] && g.out_size()[1] == p.out_extent[2] && g.out_size()[2] == p.out_extent[3],
      where + ": an overlap piece's op gives " + g.output_shape().str() + " for outputs " +
          box_str({p.out_extent[1], p.out_extent[2], p.out_extent[3]}, 3));
  p.reads_block = block;
  // A piece contiguous per sample in what it reads and in the output (e.g. any piece of a
  // depth split) runs per sample on slices of them: no buffers, no copies.
  const parallel::Index5 haloed_extents{haloed.batch, haloed.in_size[0], haloed.in_size[1], haloed.in_size[2],
                                        haloed.in_channels};
  p.source_extents = block ? p.in_extent : haloed_extents;
  if (block) p.in_offset = {0, 0, 0, 0, 0};
  p.in_place = contiguous_per_sample(p.in_extent, p.source_extents) &&
               contiguous_per_sample(p.out_extent, {haloed.batch, out[0], out[1], out[2], haloed.out_channels});
  if (p.in_place) g.batch = 1;
  p.op = ops.conv(g, layer);
  if (!p.in_place) {
    if (!p.reads_block) p.input = Tensor(g.input_shape(), g.type);
    p.output = Tensor(g.output_shape(), g.type);
  }
  p.sample_input = g.input_shape();
  p.sample_output = g.output_shape();
  return p;
}

void HaloOverlappedConv::run(Piece& p, const Tensor& source, const Tensor& w, const Tensor& bias, const Tensor& y,
                             HaloedInput& halo) {
  if (p.in_place) {
    const parallel::Index5 out_extents = parallel::extents5_of(y.shape());
    for (int64_t n = 0; n < p.in_extent[0]; ++n) {
      parallel::Index5 in_at = p.in_offset, out_at = p.out_offset;
      in_at[0] = out_at[0] = n;
      p.op->forward(source.slice(offset_of(in_at, p.source_extents), p.sample_input), w, bias,
                    y.slice(offset_of(out_at, out_extents), p.sample_output));
      halo.progress();
    }
    return;
  }
  const parallel::Index5 origin{0, 0, 0, 0, 0};
  const Tensor* input = &source;
  if (!p.reads_block) {
    parallel::copy_sub_box("tessera::conv_piece_input", parallel::Array5::of(source), p.in_offset,
                           parallel::Array5::of(p.input), origin, p.in_extent);
    input = &p.input;
  }
  p.op->forward(*input, w, bias, p.output);
  parallel::copy_sub_box("tessera::conv_piece_output", parallel::Array5::of(p.output), origin, parallel::Array5::of(y),
                         p.out_offset, p.out_extent);
}

void HaloOverlappedConv::forward(HaloedInput& halo, const Tensor& x, const Tensor& w, const Tensor& bias,
                                 const Tensor& y) {
  require_shape(active(), "HaloOverlappedConv::forward without pieces (overlap does not pay: " + verdict_.reason + ")");
  halo.start_gather(x);
  // start_gather has copied the block into the haloed input, so an interior that does not
  // read exactly the block can take its box from there.
  const Tensor& haloed = halo.gathered(x);
  Piece& interior = pieces_.front();
  run(interior, interior.reads_block ? x : haloed, w, bias, y, halo);
  halo.progress();
  halo.finish_gather();
  for (size_t i = 1; i < pieces_.size(); ++i) run(pieces_[i], haloed, w, bias, y, halo);
}

}  // namespace tessera::layers
