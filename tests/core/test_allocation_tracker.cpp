#include <catch2/catch.hpp>

#include "tessera/core/allocation_tracker.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/tensor.hpp"

using tessera::AllocationTracker;
using tessera::Shape;
using tessera::Tensor;

TEST_CASE("AllocationTracker counts live and peak bytes of tensors made while it exists") {
  Tensor before(Shape{1000}, "before");
  AllocationTracker tracker;
  CHECK(tracker.live_bytes() == 0);
  {
    Tensor a(Shape{1000}, "a");
    Tensor b(Shape{500}, "b");
    CHECK(tracker.live_bytes() >= 6000);
    CHECK(tracker.live_bytes() < 6000 + 4096);
  }
  CHECK(tracker.live_bytes() == 0);
  CHECK(tracker.peak_bytes() >= 6000);
  // Freeing what was there before it started is not counted as a saving.
  before = Tensor();
  CHECK(tracker.live_bytes() == 0);
}

TEST_CASE("AllocationTracker refuses a second tracker at once and gives the callbacks back") {
  {
    AllocationTracker tracker;
    CHECK_THROWS_AS(AllocationTracker(), tessera::Error);
  }
  AllocationTracker again;
  Tensor t(Shape{10}, "t");
  CHECK(again.live_bytes() >= 40);
}
