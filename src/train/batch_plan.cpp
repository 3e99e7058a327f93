#include "tessera/train/batch_plan.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::train {

BatchSlot BatchSlot::of(const parallel::ProcessGrid& grid, const std::array<int64_t, 3>& sample_size, int64_t batch) {
  grid.local_batch(batch, "model input");  // checks that the batch splits
  BatchSlot slot;
  slot.sample_groups = grid.distribution().sample;
  slot.sample_index = grid.sample_index();
  slot.box = grid.local_box(sample_size, "model input");
  slot.shares = grid.shares();
  slot.ranks_per_group = grid.all().size() / grid.distribution().sample;
  return slot;
}

BatchPlan::BatchPlan(int64_t train_samples, int64_t validation_samples, int64_t batch, uint64_t seed,
                     const BatchSlot& slot, int64_t accumulate)
    : train_samples_(train_samples),
      validation_samples_(validation_samples),
      batch_(batch),
      accumulate_(accumulate),
      steps_per_epoch_(batch > 0 && accumulate > 0 ? train_samples / (batch * accumulate) : 0),
      seed_(seed),
      slot_(slot) {
  if (!slot_.shares) {
    slot_.shares = std::make_shared<parallel::SampleShares>(static_cast<int>(std::max<int64_t>(slot_.sample_groups, 1)));
    slot_.ranks_per_group = 1;
  }
  if (accumulate_ < 1)
    throw Error("batch plan: an optimizer step must take at least one micro-batch, got " + std::to_string(accumulate));
  if (steps_per_epoch_ < 1)
    throw Error("batch plan: a step of " + std::to_string(batch * accumulate) +
                " samples needs at least that many of the " + std::to_string(train_samples) + " training samples");
  if (slot_.sample_groups < 1 || slot_.sample_index < 0 || slot_.sample_index >= slot_.sample_groups)
    throw Error("batch plan: slice " + std::to_string(slot_.sample_index) + " of " +
                std::to_string(slot_.sample_groups) + " does not exist");
  if (slot_.shares->ranks() != slot_.sample_groups * slot_.ranks_per_group)
    throw Error("batch plan: shares for " + std::to_string(slot_.shares->ranks()) + " ranks, but " +
                std::to_string(slot_.sample_groups) + " slices of " + std::to_string(slot_.ranks_per_group) + " ranks");
  local_rows(batch_);
}

std::vector<int64_t> BatchPlan::slice_rows(int64_t rows) const {
  return slot_.shares->rows(rows, static_cast<int>(slot_.sample_groups));
}

int64_t BatchPlan::local_rows(int64_t rows) const {
  const std::vector<int64_t> slices = slice_rows(rows);
  for (size_t g = 0; g < slices.size(); ++g)
    if (slices[g] < 1)
      throw ShapeError("batch plan: a batch of " + std::to_string(rows) + " samples leaves slice " + std::to_string(g) +
                       " of " + std::to_string(slot_.sample_groups) + " without a sample");
  return slices[static_cast<size_t>(slot_.sample_index)];
}

int64_t BatchPlan::first_row(int64_t rows) const {
  return slot_.shares->boundary(rows, static_cast<int>(slot_.sample_index) * slot_.ranks_per_group);
}

std::vector<int64_t> BatchPlan::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order(static_cast<size_t>(train_samples_));
  std::iota(order.begin(), order.end(), 0);
  // Fisher–Yates from the counter-based generator: the order depends on (seed, epoch) only.
  const uint64_t stream = 0x73687566666c65ull ^ static_cast<uint64_t>(epoch);
  for (size_t i = order.size(); i > 1; --i) {
    const uint64_t j = rng::bits(seed_, stream, i) % i;
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

const std::vector<int64_t>& BatchPlan::cached_order(int64_t epoch) const {
  for (const auto& c : cache_)
    if (c.epoch == epoch) return c.order;
  CachedOrder& c = cache_[next_cache_slot_];
  next_cache_slot_ = (next_cache_slot_ + 1) % cache_.size();
  c.epoch = epoch;
  c.order = epoch_order(epoch);
  return c.order;
}

std::vector<int64_t> BatchPlan::step_samples(int64_t step, int64_t micro) const {
  const auto& order = cached_order(step / steps_per_epoch_);
  const int64_t micro_in_epoch = (step % steps_per_epoch_) * accumulate_ + micro;
  const auto first = order.begin() + micro_in_epoch * batch_ + first_row(batch_);
  return std::vector<int64_t>(first, first + local_batch());
}

std::vector<int64_t> BatchPlan::prefetch_samples(int64_t step, int64_t micro, int64_t end_step) const {
  if (micro + 1 < accumulate_) return step_samples(step, micro + 1);
  if (step + 1 >= end_step) return {};
  return step_samples(step + 1, 0);
}

int64_t BatchPlan::evaluation_batches(int64_t n) const { return (n + batch_ - 1) / batch_; }

int64_t BatchPlan::evaluation_rows(int64_t n, int64_t j) const { return std::min(batch_, n - j * batch_); }

std::vector<int64_t> BatchPlan::evaluation_samples(int64_t n, int64_t j) const {
  const int64_t rows = evaluation_rows(n, j);
  std::vector<int64_t> idx(static_cast<size_t>(local_rows(rows)));
  std::iota(idx.begin(), idx.end(), j * batch_ + first_row(rows));
  return idx;
}

std::vector<int64_t> BatchPlan::evaluation_prefetch(int64_t n, int64_t j) const {
  if (j + 1 >= evaluation_batches(n)) return {};
  return evaluation_samples(n, j + 1);
}

}  // namespace tessera::train
