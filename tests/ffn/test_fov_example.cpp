// A flood-filling network's training example: its inputs and targets, how predictions move it,
// and where seeds may lie.
#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/ffn/fov_example.hpp"

using namespace tessera;
using namespace tessera::ffn;

namespace {

/// A 16³ volume whose image is the voxel's W coordinate and whose only object is a rod one
/// voxel thick along W through (8, 8, ·).
LabeledVolume rod_volume() {
  LabeledVolume v;
  v.size = {16, 16, 16};
  v.image.resize(16 * 16 * 16);
  v.ids.assign(16 * 16 * 16, 0);
  for (int64_t d = 0; d < 16; ++d)
    for (int64_t h = 0; h < 16; ++h)
      for (int64_t w = 0; w < 16; ++w) {
        v.image[static_cast<size_t>(v.index({d, h, w}))] = static_cast<float>(w);
        if (d == 8 && h == 8) v.ids[static_cast<size_t>(v.index({d, h, w}))] = 7;
      }
  return v;
}

FfnOptions small_options() {
  FfnOptions o;
  o.fov = {5, 5, 5};
  o.delta = {2, 2, 2};
  o.fov_moves = 1;
  return o;
}

/// What a perfect network predicts for the example's FOV: its own targets, as logits.
std::vector<float> perfect_logits(const FovExample& e, const FfnOptions& o) {
  std::vector<float> t(static_cast<size_t>(o.fov_voxels()));
  e.write_targets(t.data());
  for (auto& x : t) x = logit(x);
  return t;
}

}  // namespace

TEST_CASE("an FFN example's first FOV holds the image and a map of the seed alone", "[ffn]") {
  const LabeledVolume v = rod_volume();
  const FfnOptions o = small_options();
  const FovExample e(v, {8, 8, 6}, o);
  std::vector<float> in(125 * 2), target(125);
  e.write_inputs(in.data());
  e.write_targets(target.data());
  // FOV voxel (d, h, w) is volume voxel (6 + d, 6 + h, 4 + w).
  for (int64_t i = 0; i < 125; ++i) {
    const int64_t d = i / 25, h = i / 5 % 5, w = i % 5;
    CHECK(in[static_cast<size_t>(2 * i)] == Approx(4 + w));
    const bool centre = d == 2 && h == 2 && w == 2;
    CHECK(in[static_cast<size_t>(2 * i + 1)] == Approx(logit(centre ? 0.95f : 0.05f)));
    CHECK(target[static_cast<size_t>(i)] == Approx(d == 2 && h == 2 ? 0.95f : 0.05f));
  }
}

TEST_CASE("an FFN example follows its object as far as fov_moves allows, then ends", "[ffn]") {
  const LabeledVolume v = rod_volume();
  const FfnOptions o = small_options();
  FovExample e(v, {8, 8, 7}, o);
  std::vector<Voxel> centres{e.centre()};
  // The rod crosses only the ±W faces: moves along W, to w = 5 and w = 9, and no further
  // (2 more would be 2δ from the seed).
  while (e.advance(perfect_logits(e, o).data())) centres.push_back(e.centre());
  REQUIRE(centres.size() == 3);
  CHECK(centres[0] == Voxel{8, 8, 7});
  CHECK(((centres[1] == Voxel{8, 8, 5} && centres[2] == Voxel{8, 8, 9}) ||
         (centres[1] == Voxel{8, 8, 9} && centres[2] == Voxel{8, 8, 5})));
  CHECK(e.positions() == 3);
}

TEST_CASE("an FFN example whose prediction stays below the move threshold takes one FOV", "[ffn]") {
  const LabeledVolume v = rod_volume();
  const FfnOptions o = small_options();
  FovExample e(v, {8, 8, 7}, o);
  std::vector<float> unsure(125, logit(0.85f));
  CHECK_FALSE(e.advance(unsure.data()));
  CHECK(e.positions() == 1);
}

TEST_CASE("the second FOV of an FFN example reads the prediction written over the map", "[ffn]") {
  const LabeledVolume v = rod_volume();
  const FfnOptions o = small_options();
  FovExample e(v, {8, 8, 7}, o);
  std::vector<float> logits(125, -1.0f);
  logits[static_cast<size_t>((2 * 5 + 2) * 5 + 4)] = 3.0f;  // (8, 8, 9): the +W face, above 0.9
  logits[static_cast<size_t>((2 * 5 + 2) * 5 + 3)] = 2.5f;  // (8, 8, 8)
  REQUIRE(e.advance(logits.data()));
  CHECK(e.centre() == Voxel{8, 8, 9});
  std::vector<float> in(250);
  e.write_inputs(in.data());
  // The new FOV spans w 7..11: w = 7, 8, 9 were predicted, 10 and 11 are fresh map.
  const auto map_at = [&](int64_t d, int64_t h, int64_t w) {
    return in[static_cast<size_t>(2 * ((d * 5 + h) * 5 + w) + 1)];
  };
  CHECK(map_at(2, 2, 0) == Approx(-1.0f));
  CHECK(map_at(2, 2, 1) == Approx(2.5f));
  CHECK(map_at(2, 2, 2) == Approx(3.0f));
  CHECK(map_at(2, 2, 3) == Approx(logit(0.05f)));
  CHECK(map_at(0, 0, 0) == Approx(-1.0f));
}

TEST_CASE("seeds lie in objects, far enough from the faces for every move", "[ffn]") {
  const LabeledVolume v = rod_volume();
  const std::vector<LabeledVolume> volumes{v};
  const FfnOptions o = small_options();  // reach 2 + 2 = 4
  const SeedSampler sampler(volumes, o, "$.data");
  CHECK(sampler.candidates() == 16 - 2 * 4);  // w = 4 .. 11 on the rod
  for (uint64_t bits = 0; bits < 64; ++bits) {
    const auto s = sampler.pick(bits * 0x9E3779B97F4A7C15ull);
    CHECK(s.voxel[0] == 8);
    CHECK(s.voxel[1] == 8);
    CHECK(s.voxel[2] >= 4);
    CHECK(s.voxel[2] <= 11);
  }
  FfnOptions far = o;
  far.fov_moves = 3;  // reach 8: no voxel of a 16³ volume qualifies
  CHECK_THROWS_WITH(SeedSampler(volumes, far, "$.data"), Catch::Contains("17x17x17 voxels around it"));
}

TEST_CASE("an FFN example refuses a seed outside every object", "[ffn]") {
  const LabeledVolume v = rod_volume();
  CHECK_THROWS_AS(FovExample(v, {7, 8, 8}, small_options()), Error);
}
