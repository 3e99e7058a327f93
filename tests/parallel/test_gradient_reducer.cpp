#include <catch2/catch.hpp>

#include "tessera/parallel/gradient_reducer.hpp"

using namespace tessera;

TEST_CASE("Gradient buckets hold whole tensors, filled from the end of the buffer", "[parallel]") {
  // Tensors of 10, 30, 5, 50, 20 elements (the last is finished first by backprop).
  const std::vector<int64_t> offsets{0, 10, 40, 45, 95, 115};
  // 20 + 50 > 60: the last tensor alone; 50 + 5 fits, + 30 does not; 30 + 10 is what is left.
  CHECK(parallel::plan_gradient_buckets(offsets, 60) == std::vector<int64_t>{0, 40, 95});
  // A tensor larger than a bucket gets a bucket of its own; 30 + 10 > 25 go apart.
  CHECK(parallel::plan_gradient_buckets(offsets, 25) == std::vector<int64_t>{0, 10, 40, 45, 95});
  CHECK(parallel::plan_gradient_buckets(offsets, 1) == std::vector<int64_t>{0, 10, 40, 45, 95});
  // One bucket when everything fits.
  CHECK(parallel::plan_gradient_buckets(offsets, 115) == std::vector<int64_t>{0});
  CHECK(parallel::plan_gradient_buckets(offsets, 1 << 20) == std::vector<int64_t>{0});
  // Empty tensors never make an empty bucket.
  CHECK(parallel::plan_gradient_buckets({0, 0, 7, 7, 9}, 1) == std::vector<int64_t>{0, 7});
  CHECK(parallel::plan_gradient_buckets({0}, 4) == std::vector<int64_t>{0});
}

TEST_CASE("Gradient buckets never mix tensors summed over different groups", "[parallel]") {
  // Tensors of 4, 4, 4 and 4 elements; the middle two are shards summed over another group.
  const std::vector<int64_t> offsets{0, 4, 8, 12, 16};
  CHECK(parallel::plan_gradient_buckets(offsets, 100) == std::vector<int64_t>{0});
  CHECK(parallel::plan_gradient_buckets(offsets, 100, {0, 1, 1, 0}) == std::vector<int64_t>{0, 4, 12});
  CHECK(parallel::plan_gradient_buckets(offsets, 4, {0, 1, 1, 0}) == std::vector<int64_t>{0, 4, 8, 12});
  CHECK_THROWS_AS(parallel::plan_gradient_buckets(offsets, 100, {0, 1}), Error);
}

TEST_CASE("A gradient reducer on one rank leaves the gradients as they are", "[parallel]") {
  Tensor grads(Shape{6});
  grads.copy_from_host({1, 2, 3, 4, 5, 6});
  parallel::GradientReducer reducer(parallel::Communicator::self(), grads, {0, 2, 6}, 2);
  CHECK(reducer.buckets() == 2);
  CHECK_FALSE(reducer.has_progress_thread());
  reducer.ready_from(2);
  reducer.ready_from(0);
  reducer.finish();
  CHECK(grads.to_host() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("A gradient reducer refuses offsets that do not cover its buffer", "[parallel]") {
  Tensor grads(Shape{6});
  CHECK_THROWS_WITH(parallel::GradientReducer(parallel::Communicator::self(), grads, {0, 2, 5}, 2),
                    Catch::Contains("from 0 to the buffer's 6 elements"));
  CHECK_THROWS_AS(parallel::GradientReducer(parallel::Communicator::self(), grads, {0, 4, 2, 6}, 2), Error);
}
