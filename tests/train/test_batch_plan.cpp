#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/train/batch_plan.hpp"

using namespace tessera;
using train::BatchPlan;
using train::BatchSlot;

namespace {

BatchSlot slot(int64_t groups, int64_t index) {
  BatchSlot s;
  s.sample_groups = groups;
  s.sample_index = index;
  return s;
}

std::vector<int64_t> range(int64_t first, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

TEST_CASE("an epoch visits every training sample once, in an order from seed and epoch", "[train][batch_plan]") {
  const BatchPlan plan(50, 0, 8, 7, slot(1, 0));
  CHECK(plan.steps_per_epoch() == 6);  // the last partial batch is left out
  const auto order = plan.epoch_order(3);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == range(0, 50));
  CHECK(order != range(0, 50));
  CHECK(order == BatchPlan(50, 10, 2, 7, slot(2, 1)).epoch_order(3));  // not the batch or the slot
  CHECK(order != plan.epoch_order(4));
  CHECK(order != BatchPlan(50, 0, 8, 8, slot(1, 0)).epoch_order(3));
}

TEST_CASE("the slices of all ranks tile each global batch in order", "[train][batch_plan]") {
  // 7 does not divide by 2, 3 or 4: slices that differ by at most one sample.
  for (const int64_t batch : {8, 7})
    for (const int64_t groups : {1, 2, 3, 4}) {
      std::vector<BatchPlan> plans;
      for (int64_t r = 0; r < groups; ++r) plans.emplace_back(70, 0, batch, 11, slot(groups, r));
      int64_t rows = 0;
      for (const auto& p : plans) {
        CHECK((p.local_batch() == batch / groups || p.local_batch() == batch / groups + 1));
        CHECK(p.first_row(batch) == rows);
        rows += p.local_batch();
      }
      CHECK(rows == batch);
      for (int64_t step = 0; step < 3 * plans[0].steps_per_epoch(); ++step) {
        const int64_t epoch = step / plans[0].steps_per_epoch(), in_epoch = step % plans[0].steps_per_epoch();
        const auto order = plans[0].epoch_order(epoch);
        std::vector<int64_t> all;
        for (const auto& p : plans) {
          const auto mine = p.step_samples(step);
          CHECK(static_cast<int64_t>(mine.size()) == p.local_batch());
          all.insert(all.end(), mine.begin(), mine.end());
        }
        CHECK(all == std::vector<int64_t>(order.begin() + in_epoch * batch, order.begin() + (in_epoch + 1) * batch));
      }
    }
}

TEST_CASE("slices follow the shares' weights, also when they change after the plan is made", "[train][batch_plan]") {
  auto shares = std::make_shared<parallel::SampleShares>(2);
  std::vector<BatchPlan> plans;
  for (int64_t r = 0; r < 2; ++r) {
    BatchSlot s = slot(2, r);
    s.shares = shares;
    plans.emplace_back(80, 0, 8, 3, s);
  }
  CHECK(plans[0].slice_rows(8) == std::vector<int64_t>{4, 4});
  shares->set_weights({3, 1}, "balance");
  CHECK(plans[0].local_batch() == 6);
  CHECK(plans[1].local_batch() == 2);
  CHECK(plans[1].first_row(8) == 6);
  auto all = plans[0].step_samples(4);
  const auto second = plans[1].step_samples(4);
  all.insert(all.end(), second.begin(), second.end());
  const auto order = plans[0].epoch_order(0);
  CHECK(all == std::vector<int64_t>(order.begin() + 32, order.begin() + 40));
}

TEST_CASE("read-ahead for a step is what the next step reads, across epoch boundaries", "[train][batch_plan]") {
  const BatchPlan plan(30, 0, 4, 3, slot(2, 1));
  const int64_t per_epoch = plan.steps_per_epoch(), end = 3 * per_epoch + 2;
  for (int64_t step = 0; step + 1 < end; ++step) {
    const auto ahead = plan.prefetch_samples(step, 0, end);
    CHECK(ahead == plan.step_samples(step + 1));
    CHECK(ahead == BatchPlan(30, 0, 4, 3, slot(2, 1)).step_samples(step + 1));  // no cache involved
  }
  // The last step of an epoch reads ahead in the next epoch's order.
  const auto next_epoch = plan.epoch_order(1);
  CHECK(plan.prefetch_samples(per_epoch - 1, 0, end) ==
        std::vector<int64_t>(next_epoch.begin() + 2, next_epoch.begin() + 4));
  CHECK(plan.prefetch_samples(end - 1, 0, end).empty());  // the run stops there
  CHECK(plan.prefetch_samples(4, 0, 5).empty());
}

TEST_CASE("validation batches cover the first samples in order, the last one short", "[train][batch_plan]") {
  for (const int64_t groups : {1, 2}) {
    std::vector<BatchPlan> plans;
    for (int64_t r = 0; r < groups; ++r) plans.emplace_back(64, 22, 8, 1, slot(groups, r));
    REQUIRE(plans[0].validation_batches() == 3);
    CHECK(plans[0].validation_rows(0) == 8);
    CHECK(plans[0].validation_rows(2) == 6);
    std::vector<int64_t> all;
    for (int64_t j = 0; j < 3; ++j) {
      for (const auto& p : plans) {
        const auto mine = p.validation_samples(j);
        CHECK(static_cast<int64_t>(mine.size()) == p.validation_rows(j) / groups);
        all.insert(all.end(), mine.begin(), mine.end());
        if (j + 1 < 3) {
          CHECK(p.validation_prefetch(j) == p.validation_samples(j + 1));
        } else {
          CHECK(p.validation_prefetch(j).empty());
        }
      }
    }
    CHECK(all == range(0, 22));
  }
  CHECK(BatchPlan(64, 0, 8, 1, slot(1, 0)).validation_batches() == 0);
}

TEST_CASE("a one-rank grid reads whole samples of whole batches", "[train][batch_plan]") {
  const auto s = BatchSlot::of(parallel::ProcessGrid(), {4, 6, 8}, 5);
  CHECK(s.sample_groups == 1);
  CHECK(s.sample_index == 0);
  CHECK(s.box == parallel::Box::whole({4, 6, 8}));
  const BatchPlan plan(12, 0, 5, 0, s);
  CHECK(plan.local_batch() == 5);
  CHECK(plan.step_samples(2).size() == 5);
  const auto second_epoch = plan.epoch_order(1);
  CHECK(plan.step_samples(plan.steps_per_epoch()) ==
        std::vector<int64_t>(second_epoch.begin(), second_epoch.begin() + 5));
}

TEST_CASE("a batch plan refuses batches larger than the data or slices left empty", "[train][batch_plan]") {
  CHECK_THROWS_AS(BatchPlan(4, 0, 8, 0, slot(1, 0)), Error);
  CHECK_THROWS_WITH(BatchPlan(40, 0, 3, 0, slot(4, 0)), Catch::Contains("a batch of 3 samples leaves slice 2 of 4"));
  CHECK_THROWS_AS(BatchPlan(40, 0, 8, 0, slot(2, 2)), Error);
}

TEST_CASE("an accumulated step reads the samples of one batch K times larger", "[train][batch_plan]") {
  // 50 samples, micro-batches of 4 over 2 sample groups, 3 per step: 4 steps of 12 per epoch
  // (2 samples left out), where a plain batch of 12 has the same 4 steps and the same samples.
  for (int64_t r = 0; r < 2; ++r) {
    const BatchPlan accumulated(50, 0, 4, 9, slot(2, r), 3);
    CHECK(accumulated.steps_per_epoch() == 4);
    CHECK(accumulated.accumulate() == 3);
    const int64_t end = 2 * accumulated.steps_per_epoch();
    for (int64_t step = 0; step < end; ++step) {
      std::vector<int64_t> mine, others;
      for (int64_t micro = 0; micro < 3; ++micro) {
        const auto part = accumulated.step_samples(step, micro);
        CHECK(part.size() == 2);
        mine.insert(mine.end(), part.begin(), part.end());
        const auto ahead = accumulated.prefetch_samples(step, micro, end);
        if (micro + 1 < 3) {
          CHECK(ahead == accumulated.step_samples(step, micro + 1));
        } else if (step + 1 < end) {
          CHECK(ahead == accumulated.step_samples(step + 1, 0));
        } else {
          CHECK(ahead.empty());
        }
      }
      // The union over both sample groups of the three micro-batches is the 12-sample batch.
      const auto order = accumulated.epoch_order(step / 4);
      const auto first = order.begin() + (step % 4) * 12;
      std::vector<int64_t> batch(first, first + 12);
      for (int64_t micro = 0; micro < 3; ++micro)
        for (int64_t k = 0; k < 2; ++k) CHECK(mine[static_cast<size_t>(micro * 2 + k)] == batch[static_cast<size_t>(micro * 4 + r * 2 + k)]);
    }
  }
  CHECK_THROWS_AS(BatchPlan(50, 0, 4, 0, slot(1, 0), 0), Error);
  CHECK_THROWS_AS(BatchPlan(50, 0, 8, 0, slot(1, 0), 7), Error);  // 56 > 50 samples per step
}
