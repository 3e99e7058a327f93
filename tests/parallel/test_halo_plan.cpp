#include <catch2/catch.hpp>

#include <map>
#include <tuple>

#include "support/index5.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/halo_plan.hpp"

using namespace tessera;
using parallel::Distribution;
using parallel::HaloBox;
using parallel::HaloPlan;
using parallel::HaloWidths;
using parallel::Index5;

namespace {

Distribution spatial(int depth, int height, int width) {
  Distribution d;
  d.depth = depth, d.height = height, d.width = width;
  return d;
}

HaloWidths widths(std::array<int64_t, 3> before, std::array<int64_t, 3> after) {
  HaloWidths h;
  h.before = before, h.after = after;
  return h;
}

/// The box exchanged with the neighbour in `direction`, or nullptr.
const HaloBox* towards(const std::vector<HaloBox>& boxes, const std::array<int, 3>& direction) {
  for (const auto& b : boxes)
    if (b.direction == direction) return &b;
  return nullptr;
}

/// How often each element of the padded block is written by forward: once by the interior,
/// a receive or a boundary region each.
std::vector<int> padded_coverage(const HaloPlan& plan) {
  const Index5 padded = parallel::extents5_of(plan.padded_shape());
  std::vector<int> hits(static_cast<size_t>(padded[0] * padded[1] * padded[2] * padded[3] * padded[4]), 0);
  auto mark = [&](const Index5& offset, const Index5& extent) {
    testing::for_each_index(extent, [&](const Index5& i) {
      ++hits[static_cast<size_t>(testing::linear(padded, testing::plus(offset, i)))];
    });
  };
  mark(plan.interior_offset(), parallel::extents5_of(plan.local_shape()));
  for (const auto& r : plan.receives()) mark(r.offset, r.extent);
  for (const auto& b : plan.boundary()) mark(b.offset, b.extent);
  return hits;
}

/// Every spatial index of a grid.
std::vector<std::array<int, 3>> indices_of(const Distribution& d) {
  std::vector<std::array<int, 3>> all;
  for (int z = 0; z < d.depth; ++z)
    for (int y = 0; y < d.height; ++y)
      for (int x = 0; x < d.width; ++x) all.push_back({z, y, x});
  return all;
}

}  // namespace

TEST_CASE("HaloPlan along one split axis: an interior block exchanges with both neighbours", "[parallel][halo]") {
  // Depth over 3 ranks, the middle one; height and width are not split and have no halo.
  const HaloPlan plan(spatial(3, 1, 1), {1, 0, 0}, Shape{2, 4, 3, 5, 2}, widths({1, 0, 0}, {2, 0, 0}), "conv");
  CHECK(plan.padded_shape() == Shape{2, 7, 3, 5, 2});
  REQUIRE(plan.receives().size() == 2);
  REQUIRE(plan.sends().size() == 2);
  CHECK(plan.boundary().empty());

  // From the block before: its last row fills the 1-row halo before ours (tag: direction -1
  // along depth seen from us, 0 * 9 + 1 * 3 + 1).
  const HaloBox* before = towards(plan.receives(), {-1, 0, 0});
  REQUIRE(before);
  CHECK(before->peer_index == std::array<int, 3>{0, 0, 0});
  CHECK(before->peer == 0);
  CHECK(before->tag == 4);
  CHECK(before->offset == Index5{0, 0, 0, 0, 0});
  CHECK(before->extent == Index5{2, 1, 3, 5, 2});
  const HaloBox* after = towards(plan.receives(), {1, 0, 0});
  REQUIRE(after);
  CHECK(after->peer == 2);
  CHECK(after->tag == 22);
  CHECK(after->offset == Index5{0, 5, 0, 0, 0});
  CHECK(after->extent == Index5{2, 2, 3, 5, 2});

  // The block before needs our first 2 rows (its after halo), the block after our last row.
  const HaloBox* to_before = towards(plan.sends(), {-1, 0, 0});
  REQUIRE(to_before);
  CHECK(to_before->tag == 22);  // fills the halo after the block before
  CHECK(to_before->offset == Index5{0, 0, 0, 0, 0});
  CHECK(to_before->extent == Index5{2, 2, 3, 5, 2});
  const HaloBox* to_after = towards(plan.sends(), {1, 0, 0});
  REQUIRE(to_after);
  CHECK(to_after->offset == Index5{0, 3, 0, 0, 0});
  CHECK(to_after->extent == Index5{2, 1, 3, 5, 2});

  CHECK(plan.elements_sent() == 3 * 2 * 3 * 5 * 2);
  CHECK(plan.elements_received() == 3 * 2 * 3 * 5 * 2);
  CHECK(plan.bytes_sent() == plan.elements_sent() * 4);
  CHECK(plan.messages() == 4);
}

TEST_CASE("HaloPlan at the global boundary: the halo beyond it is a boundary region", "[parallel][halo]") {
  // The first of 3 depth blocks: no neighbour before it.
  const HaloPlan first(spatial(3, 1, 1), {0, 0, 0}, Shape{2, 4, 3, 5, 2}, widths({1, 0, 0}, {2, 0, 0}), "conv");
  REQUIRE(first.receives().size() == 1);
  REQUIRE(first.sends().size() == 1);
  CHECK(first.receives()[0].direction == std::array<int, 3>{1, 0, 0});
  CHECK(first.sends()[0].extent == Index5{2, 1, 3, 5, 2});  // the next block's 1-row halo before
  REQUIRE(first.boundary().size() == 1);
  CHECK(first.boundary()[0].offset == Index5{0, 0, 0, 0, 0});
  CHECK(first.boundary()[0].extent == Index5{2, 1, 3, 5, 2});
  CHECK(first.elements_sent() == 60);  // a depth row is 2 x 3 x 5 x 2 elements
  CHECK(first.elements_received() == 120);

  // The last block: the 2 rows after it are boundary; it sends its first 2 rows back.
  const HaloPlan last(spatial(3, 1, 1), {2, 0, 0}, Shape{2, 4, 3, 5, 2}, widths({1, 0, 0}, {2, 0, 0}), "conv");
  REQUIRE(last.boundary().size() == 1);
  CHECK(last.boundary()[0].offset == Index5{0, 5, 0, 0, 0});
  CHECK(last.boundary()[0].extent == Index5{2, 2, 3, 5, 2});
  CHECK(last.elements_sent() == 120);
  CHECK(last.elements_received() == 60);

  // A halo on one side only: nothing travels the other way.
  const HaloPlan one_sided(spatial(2, 1, 1), {0, 0, 0}, Shape{1, 4, 3, 3, 1}, widths({0, 0, 0}, {1, 0, 0}), "pool");
  CHECK(one_sided.sends().empty());
  REQUIRE(one_sided.receives().size() == 1);
  CHECK(one_sided.boundary().empty());
}

TEST_CASE("HaloPlan along two split axes exchanges edges with the diagonal neighbour", "[parallel][halo]") {
  // Height and width over 2 x 2, the corner block (0, 0) of a 2D activation.
  const HaloPlan plan(spatial(1, 2, 2), {0, 0, 0}, Shape{1, 4, 6, 3}, widths({0, 1, 1}, {0, 1, 2}), "conv");
  CHECK(plan.padded_shape() == Shape{1, 6, 9, 3});
  // Neighbours after along height, after along width, and diagonally after both.
  REQUIRE(plan.receives().size() == 3);
  REQUIRE(plan.sends().size() == 3);
  const HaloBox* corner = towards(plan.receives(), {0, 1, 1});
  REQUIRE(corner);
  CHECK(corner->peer == 3);
  CHECK(corner->peer_index == std::array<int, 3>{0, 1, 1});
  CHECK(corner->offset == Index5{0, 0, 5, 7, 0});
  CHECK(corner->extent == Index5{1, 1, 1, 2, 3});
  const HaloBox* corner_send = towards(plan.sends(), {0, 1, 1});
  REQUIRE(corner_send);
  CHECK(corner_send->offset == Index5{0, 0, 3, 5, 0});  // what (1, 1) needs for its halo before both
  CHECK(corner_send->extent == Index5{1, 1, 1, 1, 3});
  // Boundary: before along height (with its corners) and before along width, 5 regions in all.
  CHECK(plan.boundary().size() == 5);
  // Received: 1 row of 6, 2 columns of 4, the 1 x 2 corner; sent: 1 row, 1 column, 1 corner.
  CHECK(plan.elements_received() == (6 + 2 * 4 + 2) * 3);
  CHECK(plan.elements_sent() == (6 + 4 + 1) * 3);
  for (int hits : padded_coverage(plan)) REQUIRE(hits == 1);
}

TEST_CASE("HaloPlan along three split axes: a corner block has 7 neighbours, an inner one 26", "[parallel][halo]") {
  const HaloWidths one = widths({1, 1, 1}, {1, 1, 1});
  const HaloPlan corner(spatial(2, 2, 2), {1, 0, 1}, Shape{1, 3, 3, 3, 2}, one, "conv");
  CHECK(corner.receives().size() == 7);
  CHECK(corner.sends().size() == 7);
  CHECK(corner.boundary().size() == 26 - 7);
  // Faces 9 each, edges 3 each, a corner 1, times 2 channels.
  CHECK(corner.elements_received() == (3 * 9 + 3 * 3 + 1) * 2);
  CHECK(corner.elements_sent() == corner.elements_received());
  for (int hits : padded_coverage(corner)) REQUIRE(hits == 1);

  const HaloPlan inner(spatial(3, 3, 3), {1, 1, 1}, Shape{1, 3, 3, 3, 2}, one, "conv");
  CHECK(inner.receives().size() == 26);
  CHECK(inner.sends().size() == 26);
  CHECK(inner.boundary().empty());
  CHECK(inner.elements_received() == 5 * 5 * 5 * 2 - 3 * 3 * 3 * 2);
  for (int hits : padded_coverage(inner)) REQUIRE(hits == 1);
  // Peers are numbered like the grid's spatial ranks: width fastest.
  for (const auto& b : inner.sends()) CHECK(b.peer == (b.peer_index[0] * 3 + b.peer_index[1]) * 3 + b.peer_index[2]);
}

TEST_CASE("Every send of a HaloPlan is the matching receive of its neighbour's plan", "[parallel][halo]") {
  struct Case {
    Distribution d;
    Shape local;
    HaloWidths halo;
  };
  const std::vector<Case> cases{
      {spatial(4, 1, 1), Shape{1, 3, 4, 4, 2}, widths({2, 0, 0}, {1, 0, 0})},
      {spatial(1, 3, 2), Shape{2, 5, 4, 1}, widths({0, 1, 0}, {0, 2, 3})},
      {spatial(3, 2, 4), Shape{1, 3, 4, 5, 3}, widths({1, 0, 2}, {2, 1, 1})},
  };
  for (const auto& c : cases) {
    std::vector<HaloPlan> plans;
    for (const auto& index : indices_of(c.d)) plans.emplace_back(c.d, index, c.local, c.halo, "layer");
    int64_t sent = 0, received = 0;
    for (size_t r = 0; r < plans.size(); ++r) {
      for (int hits : padded_coverage(plans[r])) REQUIRE(hits == 1);
      sent += plans[r].elements_sent();
      received += plans[r].elements_received();
      for (const auto& s : plans[r].sends()) {
        const auto& peer = plans.at(static_cast<size_t>(s.peer));
        REQUIRE(peer.receives().size() > 0);
        const HaloBox* match = nullptr;
        for (const auto& q : peer.receives())
          if (q.peer == static_cast<int>(r) && q.tag == s.tag) match = &q;
        REQUIRE(match);
        CHECK(match->extent == s.extent);
        CHECK(match->direction == std::array<int, 3>{-s.direction[0], -s.direction[1], -s.direction[2]});
      }
      // Matching by (peer, tag) is unambiguous: no two messages to one peer share a tag.
      std::map<std::pair<int, int>, int> seen;
      for (const auto& s : plans[r].sends()) CHECK(++seen[{s.peer, s.tag}] == 1);
    }
    CHECK(sent == received);
  }
}

TEST_CASE("HaloPlan refuses halos it cannot fill, naming the layer", "[parallel][halo]") {
  CHECK_THROWS_WITH(HaloPlan(spatial(2, 1, 1), {0, 0, 0}, Shape{1, 2, 2, 2, 1}, widths({3, 0, 0}, {0, 0, 0}), "conv"),
                    "conv: a depth halo of 3 is wider than the neighbouring block's depth of 2 (block [1, 2, 2, 2, "
                    "1], distribution {depth 2})");
  CHECK_THROWS_WITH(HaloPlan(Distribution(), {0, 0, 0}, Shape{2, 3, 4, 2}, widths({1, 0, 0}, {0, 0, 0}), "pool"),
                    "pool: a 2D block [2, 3, 4, 2] has no depth to split or pad (halo depth 1+0, height 0+0, width "
                    "0+0, distribution {sample 1})");
  CHECK_THROWS_WITH(HaloPlan(Distribution(), {0, 0, 0}, Shape{1, 2, 2, 2, 1}, widths({0, -1, 0}, {0, 0, 0}), "conv"),
                    Catch::Contains("conv: negative height halo"));
  CHECK_THROWS_AS(HaloPlan(Distribution(), {0, 0, 0}, Shape{2, 8}, widths({1, 1, 1}, {1, 1, 1}), "dense"), ShapeError);
  // Without a neighbour the whole halo is boundary, of any width.
  const HaloPlan alone(Distribution(), {0, 0, 0}, Shape{1, 2, 2, 2, 1}, widths({3, 0, 0}, {0, 0, 4}), "conv");
  CHECK(alone.padded_shape() == Shape{1, 5, 2, 6, 1});
  CHECK(alone.messages() == 0);
  for (int hits : padded_coverage(alone)) REQUIRE(hits == 1);
}
