// The training batches of a flood-filling network: which examples each slot runs, whichever
// rank holds it, and how predictions feed back into the next batch.
#include <catch2/catch.hpp>

#include "tessera/ffn/fov_training_source.hpp"

using namespace tessera;
using namespace tessera::ffn;

namespace {

/// Two 14³ volumes of four slabs along D (objects 1..4, each 3 voxels thick, 0 between), the
/// image a smooth ramp.
std::shared_ptr<const std::vector<LabeledVolume>> slab_volumes() {
  auto volumes = std::make_shared<std::vector<LabeledVolume>>();
  for (int k = 0; k < 2; ++k) {
    LabeledVolume v;
    v.size = {14, 14, 14};
    v.image.resize(14 * 14 * 14);
    v.ids.resize(14 * 14 * 14);
    for (int64_t i = 0; i < v.voxels(); ++i) {
      const int64_t d = i / 196;
      v.image[static_cast<size_t>(i)] = static_cast<float>(i % 97) / 97.0f + static_cast<float>(k);
      v.ids[static_cast<size_t>(i)] = d % 4 == 3 ? 0u : static_cast<uint32_t>(d / 4 + 1);
    }
    volumes->push_back(std::move(v));
  }
  return volumes;
}

FfnOptions options() {
  FfnOptions o;
  o.fov = {5, 5, 5};
  o.delta = {2, 2, 2};
  return o;
}

Tensor tensor(int64_t rows, int64_t channels) { return Tensor(Shape{rows, 5, 5, 5, channels}, "test"); }

/// A prediction of `logit` at every voxel of `rows` FOVs.
Tensor prediction(int64_t rows, float logit) {
  Tensor t = tensor(rows, 1);
  t.copy_from_host(std::vector<float>(static_cast<size_t>(t.numel()), logit));
  return t;
}

}  // namespace

TEST_CASE("FFN training slots give the same FOVs on one rank as split over two", "[ffn]") {
  const auto volumes = slab_volumes();
  FovTrainingSource all(volumes, options(), 11, 0, 4, 4, 1, "$.data");
  FovTrainingSource first(volumes, options(), 11, 0, 2, 4, 1, "$.data");
  FovTrainingSource second(volumes, options(), 11, 2, 2, 4, 1, "$.data");
  const Tensor in4 = tensor(4, 2), t4 = tensor(4, 1), in2 = tensor(2, 2), t2 = tensor(2, 1);
  for (int64_t step = 0; step < 16; ++step) {
    all.load(step, 0, in4, t4);
    const std::vector<float> whole = in4.to_host(), whole_targets = t4.to_host();
    first.load(step, 0, in2, t2);
    std::vector<float> parts = in2.to_host(), part_targets = t2.to_host();
    second.load(step, 0, in2, t2);
    for (float x : in2.to_host()) parts.push_back(x);
    for (float x : t2.to_host()) part_targets.push_back(x);
    REQUIRE(parts == whole);
    REQUIRE(part_targets == whole_targets);
    // A prediction that sends every FOV on (0.99 everywhere) every fourth step and asks for no
    // move (0.01) otherwise, fed back alike: examples end when their queued moves run out.
    const float p = step % 4 == 0 ? 4.6f : -4.6f;
    all.observe(prediction(4, p));
    first.observe(prediction(2, p));
    second.observe(prediction(2, p));
  }
  CHECK(all.examples_finished() == first.examples_finished() + second.examples_finished());
  CHECK(all.positions_finished() == first.positions_finished() + second.positions_finished());
  CHECK(all.examples_finished() > 0);
}

TEST_CASE("an FFN slot starts a new example when its prediction ends the last one", "[ffn]") {
  const auto volumes = slab_volumes();
  FovTrainingSource source(volumes, options(), 5, 0, 1, 1, 1, "$.data");
  const Tensor in = tensor(1, 2), t = tensor(1, 1);
  source.load(0, 0, in, t);
  const std::vector<float> first = in.to_host();
  source.observe(prediction(1, 4.6f));  // moves: the example goes on
  CHECK(source.examples_finished() == 0);
  source.load(1, 0, in, t);
  const std::vector<float> moved = in.to_host();
  CHECK(moved != first);
  // The moved FOV's map holds the prediction where it overlaps the first FOV.
  int64_t predicted = 0;
  for (size_t i = 1; i < moved.size(); i += 2) predicted += moved[i] == Approx(4.6f) ? 1 : 0;
  CHECK(predicted > 0);
  for (int k = 0; k < 200 && source.examples_finished() == 0; ++k) {
    source.observe(prediction(1, -4.6f));
    source.load(2 + k, 0, in, t);
  }
  // It ended once the moves the first prediction queued were used up.
  CHECK(source.examples_finished() == 1);
  CHECK(source.positions_finished() > 1);
}
