// The face-maximum movement rule on synthetic object maps: moves where, and only where, a face
// of the field of view crosses the threshold.
#include <catch2/catch.hpp>

#include "tessera/core/error.hpp"
#include "tessera/ffn/fov_moves.hpp"

using tessera::Error;
using tessera::ffn::face_max_moves;
using tessera::ffn::FovMove;

namespace {

/// A 9³ field of view (centre 4, 4, 4) of background probability 0.05 with the given voxels set.
struct Map {
  std::vector<float> p = std::vector<float>(9 * 9 * 9, 0.05f);
  Map& set(int64_t d, int64_t h, int64_t w, float value) {
    p[static_cast<size_t>((d * 9 + h) * 9 + w)] = value;
    return *this;
  }
};

constexpr std::array<int64_t, 3> kFov{9, 9, 9}, kDelta{2, 2, 2};

}  // namespace

TEST_CASE("an object that stays inside the field of view asks for no move", "[ffn][fov]") {
  Map m;
  for (int64_t d = 3; d <= 5; ++d)
    for (int64_t h = 3; h <= 5; ++h)
      for (int64_t w = 3; w <= 5; ++w) m.set(d, h, w, 0.99f);  // within ±1 of the centre: no face reached
  CHECK(face_max_moves(m.p, kFov, kDelta, 0.9f).empty());
}

TEST_CASE("a face above the threshold gives one move, to its highest voxel", "[ffn][fov]") {
  Map m;
  // On the +W face (w = 4 + 2), off-centre in D and H; below the threshold on the −D face.
  m.set(3, 5, 6, 0.95f).set(4, 4, 6, 0.91f).set(2, 4, 4, 0.85f);
  const auto moves = face_max_moves(m.p, kFov, kDelta, 0.9f);
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].offset == std::array<int64_t, 3>{-1, 1, 2});
  CHECK(moves[0].score == 0.95f);
  // At exactly the threshold it moves (the reference skips only scores below it).
  CHECK(face_max_moves(m.p, kFov, kDelta, 0.95f).size() == 1);
  CHECK(face_max_moves(m.p, kFov, kDelta, 0.951f).empty());
  // A lower threshold takes the −D face too, after the better-scored one.
  const auto two = face_max_moves(m.p, kFov, kDelta, 0.8f);
  REQUIRE(two.size() == 2);
  CHECK(two[0].offset == std::array<int64_t, 3>{-1, 1, 2});
  CHECK(two[1].offset == std::array<int64_t, 3>{-2, 0, 0});
  CHECK(two[1].score == 0.85f);
}

TEST_CASE("only the face region within the step of the centre counts", "[ffn][fov]") {
  Map m;
  // On the plane w = 6 but 3 voxels from the centre in H: outside the face (±2), so no move.
  m.set(4, 1, 6, 0.99f);
  // Beyond the face along the axis (w = 7): not the face either.
  m.set(4, 4, 7, 0.99f);
  CHECK(face_max_moves(m.p, kFov, kDelta, 0.9f).empty());
}

TEST_CASE("a filled field of view asks for all six moves, equal scores in axis order", "[ffn][fov]") {
  const std::vector<float> full(9 * 9 * 9, 0.97f);
  const auto moves = face_max_moves(full, kFov, kDelta, 0.9f);
  REQUIRE(moves.size() == 6);
  // Ties within a face go to the voxel nearest its centre: straight along each axis.
  CHECK(moves[0].offset == std::array<int64_t, 3>{-2, 0, 0});
  CHECK(moves[1].offset == std::array<int64_t, 3>{2, 0, 0});
  CHECK(moves[2].offset == std::array<int64_t, 3>{0, -2, 0});
  CHECK(moves[3].offset == std::array<int64_t, 3>{0, 2, 0});
  CHECK(moves[4].offset == std::array<int64_t, 3>{0, 0, -2});
  CHECK(moves[5].offset == std::array<int64_t, 3>{0, 0, 2});
  // A zero step switches an axis off (2D-like movement within a plane).
  CHECK(face_max_moves(full, kFov, {0, 2, 2}, 0.9f).size() == 4);
}

TEST_CASE("of equal highest voxels on a face, the one nearest its centre moves the FOV", "[ffn][fov]") {
  Map m;
  // Two voxels of the +W face at 0.99: one two steps off its centre (first in row-major order),
  // one a step off it.
  m.set(3, 3, 6, 0.99f).set(4, 5, 6, 0.99f);
  const auto moves = face_max_moves(m.p, kFov, kDelta, 0.9f);
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].offset == std::array<int64_t, 3>{0, 1, 2});
}

TEST_CASE("FOV moves refuse a map of the wrong size and steps past the field of view", "[ffn][fov]") {
  CHECK_THROWS_WITH(face_max_moves(std::vector<float>(10), kFov, kDelta, 0.9f),
                    Catch::Contains("10 values is not a 9x9x9 field of view"));
  CHECK_THROWS_AS(face_max_moves(std::vector<float>(729), kFov, {5, 2, 2}, 0.9f), Error);
  CHECK_NOTHROW(face_max_moves(std::vector<float>(729), kFov, {4, 4, 4}, 0.9f));
}
