// HaloOverlappedConv::pays_off, the rule that decides per layer whether a spatially split
// convolution computes its interior while the halos travel. (That the overlapped outputs and
// gradients equal the exchange-first ones is checked over ranks in
// tests/parallel/spatial_equivalence.cpp.)
#include <catch2/catch.hpp>

#include "tessera/layers/halo_overlapped_conv.hpp"
#include "tessera/registry/op_factory.hpp"

using tessera::layers::HaloOverlappedConv;
using tessera::ops::ConvGeometry;
using tessera::parallel::HaloWidths;

namespace {

/// A 3x3x3 convolution, padding 1, on a haloed block: `block` per axis plus a halo of 1 on
/// both sides of each axis in `split` (the op keeps its padding along the others).
struct Case {
  ConvGeometry g;
  HaloWidths halo;
};
Case haloed(std::array<int64_t, 3> block, std::array<bool, 3> split, int64_t channels, int64_t batch = 2) {
  Case c;
  c.g.spatial_rank = 3;
  c.g.batch = batch;
  c.g.in_channels = c.g.out_channels = channels;
  c.g.kernel = {3, 3, 3};
  for (size_t k = 0; k < 3; ++k) {
    c.g.in_size[k] = block[k] + (split[k] ? 2 : 0);
    c.g.padding[k] = split[k] ? 0 : 1;
    c.halo.before[k] = c.halo.after[k] = split[k] ? 1 : 0;
  }
  return c;
}

}  // namespace

TEST_CASE("Overlap pays for a depth split with a large interior and enough work", "[layers][halo]") {
  const Case c = haloed({16, 32, 32}, {true, false, false}, 64);
  const auto v = HaloOverlappedConv::pays_off(c.g, c.halo);
  CHECK(v.pays);
  CHECK_FALSE(v.needs_buffers);
  CHECK(v.interior_share == Approx(14.0 / 16.0));
  CHECK(v.reason == "interior 14x32x32 of 16x32x32 outputs (88%), 2 shell pieces");
  // A 2D height split is contiguous per sample too.
  Case h2 = haloed({1, 16, 64}, {false, true, false}, 128);
  h2.g.spatial_rank = 2;
  h2.g.kernel[0] = 1;
  h2.g.padding[0] = 0;
  CHECK(HaloOverlappedConv::pays_off(h2.g, h2.halo).pays);
}

TEST_CASE("Overlap of height and width splits would need buffers, so it is not the default", "[layers][halo]") {
  // Split in height and width: the interior is cut along both, not contiguous per sample.
  const Case hw = haloed({32, 16, 16}, {false, true, true}, 64);
  const auto vhw = HaloOverlappedConv::pays_off(hw.g, hw.halo);
  CHECK_FALSE(vhw.pays);
  CHECK(vhw.needs_buffers);
  CHECK(vhw.interior_share == Approx(14.0 * 14.0 / (16.0 * 16.0)));
  CHECK(vhw.reason.find("4 shell pieces") != std::string::npos);
  CHECK(vhw.reason.find("buffers of about one output block (4 MiB)") != std::string::npos);
  // Depth and height: two axes.
  const Case dh = haloed({16, 16, 32}, {true, true, false}, 64);
  CHECK(HaloOverlappedConv::pays_off(dh.g, dh.halo).needs_buffers);
}

TEST_CASE("Overlap does not pay without an interior, with little interior or little work", "[layers][halo]") {
  // A block of 2 rows: every output's window reaches a halo.
  const Case thin = haloed({2, 8, 8}, {true, false, false}, 256);
  const auto v = HaloOverlappedConv::pays_off(thin.g, thin.halo);
  CHECK_FALSE(v.pays);
  CHECK(v.reason.find("no output's window lies inside the block along depth") != std::string::npos);
  // 4x4x4 blocks split on every axis: an interior of 2x2x2, 1/8 of the outputs.
  const Case cube = haloed({4, 4, 4}, {true, true, true}, 256);
  const auto vc = HaloOverlappedConv::pays_off(cube.g, cube.halo);
  CHECK_FALSE(vc.pays);
  CHECK(vc.interior_share == Approx(0.125));
  CHECK(vc.reason.find("too little interior") != std::string::npos);
  // Few channels on a small block: microseconds of work.
  const Case tiny = haloed({8, 8, 8}, {true, false, false}, 2);
  const auto vt = HaloOverlappedConv::pays_off(tiny.g, tiny.halo);
  CHECK_FALSE(vt.pays);
  CHECK(vt.reason.find("too little work") != std::string::npos);
  // No halo at all.
  Case none = haloed({8, 8, 8}, {false, false, false}, 64);
  CHECK_FALSE(HaloOverlappedConv::pays_off(none.g, none.halo).pays);
}

TEST_CASE("A strided convolution's interior starts where its windows leave the halo", "[layers][halo]") {
  // Stride 2, kernel 3, padding 1 split in depth: a halo of 1 before, none after; outputs
  // 0..7 of a 16-row block, output o reads haloed rows [2o, 2o + 3), so output 0 needs the halo.
  Case c = haloed({16, 16, 16}, {true, false, false}, 64);
  c.g.stride = {2, 2, 2};
  c.g.in_size[0] = 17;
  c.halo.after[0] = 0;
  const auto v = HaloOverlappedConv::pays_off(c.g, c.halo);
  CHECK(v.pays);
  CHECK(v.reason.find("interior 7x8x8 of 8x8x8") == 0);
}

TEST_CASE("halo_overlap \"always\" overlaps where buffers are needed, and says so once", "[layers][halo]") {
  const Case hw = haloed({32, 16, 16}, {false, true, true}, 64);
  tessera::registry::OpFactory factory("kokkos");
  HaloOverlappedConv measured, always;
  measured.reshape(hw.g, hw.halo, false, factory, "conv", "$.model.layers[0]");
  CHECK_FALSE(measured.verdict().pays);
  CHECK(measured.verdict().reason.find("(halo_overlap \"always\" overlaps anyway)") != std::string::npos);
  always.reshape(hw.g, hw.halo, true, factory, "conv", "$.model.layers[0]");
  CHECK(always.verdict().pays);
  const std::string& reason = always.verdict().reason;
  CHECK(reason.find("buffers of about one output block") != std::string::npos);
  CHECK(reason.find("overlaps anyway") == std::string::npos);
  CHECK(reason.find("(overlapped anyway: halo_overlap \"always\")") != std::string::npos);
  CHECK(reason.find("always") == reason.rfind("always"));
}
