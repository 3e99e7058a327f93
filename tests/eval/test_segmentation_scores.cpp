// Variation of information and adapted Rand error against cases worked by hand.
#include <catch2/catch.hpp>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/eval/segmentation_scores.hpp"

using tessera::Error;
using tessera::eval::Labels;
using tessera::eval::score_segmentation;

TEST_CASE("a segmentation equal to the truth up to its ids scores 0", "[eval][segmentation]") {
  const auto s = score_segmentation({1, 1, 2, 2, 0}, {5, 5, 7, 7, 5});
  CHECK(s.vi() == 0.0);
  CHECK(s.rand_error == Approx(0.0).margin(1e-15));
  CHECK(s.voxels == 4);  // the voxel with true id 0 is not scored
  CHECK(s.true_objects == 2);
  CHECK(s.found_segments == 2);
}

TEST_CASE("splitting an object costs split VI and Rand recall, merging two costs merge VI and precision",
          "[eval][segmentation]") {
  // One object of 4 voxels cut in halves: H(found | truth) = 1 bit. Ordered pairs of distinct
  // voxels: together in the truth 4·3 = 12, in the segmentation 2·1 + 2·1 = 4, in both 4; so
  // precision 4/4, recall 4/12, F = 2·(1/3)/(4/3) = 1/2.
  const auto split = score_segmentation({1, 1, 1, 1}, {1, 1, 2, 2});
  CHECK(split.vi_split == Approx(1.0));
  CHECK(split.vi_merge == 0.0);
  CHECK(split.rand_precision == Approx(1.0));
  CHECK(split.rand_recall == Approx(1.0 / 3));
  CHECK(split.rand_error == Approx(0.5));
  // The mirror case: two objects in one segment.
  const auto merge = score_segmentation({1, 1, 2, 2}, {3, 3, 3, 3});
  CHECK(merge.vi_split == 0.0);
  CHECK(merge.vi_merge == Approx(1.0));
  CHECK(merge.rand_precision == Approx(1.0 / 3));
  CHECK(merge.rand_recall == Approx(1.0));
  CHECK(merge.rand_error == Approx(0.5));
}

TEST_CASE("an uneven case: VI and Rand from the contingency table", "[eval][segmentation]") {
  // truth {1,1,1,2,2,2}, found {1,1,2,2,3,3}: cells (1,1):2 (1,2):1 (2,2):1 (2,3):2, N = 6.
  // Σ n·log2 n: cells 2 + 0 + 0 + 2 = 4, objects 2·3·log2 3, segments 3·2 = 6.
  // split = (6·log2 3 − 4)/6, merge = (6 − 4)/6. Pairs: both 2 + 2 = 4, found 3·2 = 6,
  // truth 2·6 = 12: P = 2/3, R = 1/3, F = 4/9.
  const auto s = score_segmentation({1, 1, 1, 2, 2, 2}, {1, 1, 2, 2, 3, 3});
  CHECK(s.vi_split == Approx((6 * std::log2(3.0) - 4) / 6));
  CHECK(s.vi_merge == Approx(1.0 / 3));
  CHECK(s.vi() == Approx(s.vi_split + s.vi_merge));
  CHECK(s.rand_precision == Approx(2.0 / 3));
  CHECK(s.rand_recall == Approx(1.0 / 3));
  CHECK(s.rand_error == Approx(5.0 / 9));
  CHECK(s.found_segments == 3);
}

TEST_CASE("voxels left unsegmented (found id 0) count as one segment", "[eval][segmentation]") {
  const auto s = score_segmentation({1, 1, 2, 2}, {0, 0, 0, 0});
  CHECK(s.vi_merge == Approx(1.0));
  CHECK(s.found_segments == 1);
  // Every voxel its own segment: no pair together in the segmentation, so nothing merged
  // (precision 1) and nothing kept together (recall 0): error 1.
  const auto singletons = score_segmentation({1, 1, 2, 2}, {1, 2, 3, 4});
  CHECK(singletons.rand_precision == 1.0);
  CHECK(singletons.rand_recall == 0.0);
  CHECK(singletons.rand_error == 1.0);
  CHECK(singletons.vi_split == Approx(1.0));
}

TEST_CASE("segmentation scores refuse mismatched sizes and a truth without objects", "[eval][segmentation]") {
  CHECK_THROWS_WITH(score_segmentation({1, 1}, {1}), Catch::Contains("2 voxels") && Catch::Contains("1"));
  CHECK_THROWS_AS(score_segmentation({0, 0}, {1, 1}), Error);
  CHECK_THROWS_WITH(score_segmentation({0, 0}, {1, 1}), Catch::Contains("no voxel belongs to a true object"));
}
