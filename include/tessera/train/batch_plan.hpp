#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/parallel/box.hpp"
#include "tessera/parallel/process_grid.hpp"

namespace tessera::train {

/// Where one rank reads in every global batch: a contiguous slice of the batch's samples
/// (ranks are numbered sample-slowest, so slice k belongs to the k-th sample group) and a box
/// of each of those samples. The slices are the SampleShares' (the same as every layer's).
struct BatchSlot {
  int64_t sample_groups = 1;  // slices each global batch is cut into
  int64_t sample_index = 0;   // the slice this rank reads
  parallel::Box box;          // the part of each sample it reads
  /// How batches split over the ranks, each slice `ranks_per_group` consecutive ranks of them;
  /// none: into slices that differ by at most one sample.
  std::shared_ptr<const parallel::SampleShares> shares;
  int ranks_per_group = 1;

  /// This rank's slot under the model input's `grid`, for global batches of `batch` samples of
  /// spatial size `sample_size` (D, H, W); throws ShapeError naming "model input" when the
  /// batch leaves a sample group without samples or the sample does not split in space.
  static BatchSlot of(const parallel::ProcessGrid& grid, const std::array<int64_t, 3>& sample_size, int64_t batch);
};

/// Which samples one rank reads, and when. Training visits the samples in a permutation that
/// depends only on the seed and the epoch, `batch` at a time (a last partial batch is left
/// out); validation visits its first `validation_samples` in order. Every rank reads its slot
/// of each global batch, so the slots of all ranks tile each batch in order.
///
/// With gradient accumulation an optimizer step takes `accumulate` consecutive micro-batches
/// of `batch` samples of the epoch's order, so a step sees the same samples as one step of a
/// batch·accumulate batch would; an epoch has as many steps as whole such updates fit (the
/// rest of the order is left out, as a last partial batch is).
class BatchPlan {
 public:
  BatchPlan(int64_t train_samples, int64_t validation_samples, int64_t batch, uint64_t seed, const BatchSlot& slot,
            int64_t accumulate = 1);

  /// The global micro-batch: the samples of one forward and backward pass over all ranks.
  int64_t batch() const { return batch_; }
  int64_t accumulate() const { return accumulate_; }
  /// Optimizer steps per epoch.
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  /// Samples of each global training batch this rank reads.
  int64_t local_batch() const { return local_rows(batch_); }
  /// The part of each sample this rank reads.
  const parallel::Box& box() const { return slot_.box; }

  /// The order in which epoch `epoch` visits the training samples.
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  /// This rank's samples for micro-batch `micro` (< accumulate()) of optimizer step `step`
  /// (counted over all epochs from 0).
  std::vector<int64_t> step_samples(int64_t step, int64_t micro = 0) const;
  /// What to read ahead while micro-batch `micro` of step `step` trains: the next micro-batch,
  /// or the first of step + 1 (in the next epoch's order when step + 1 starts one); nothing
  /// after the last micro-batch of step end_step − 1, where the run stops.
  std::vector<int64_t> prefetch_samples(int64_t step, int64_t micro, int64_t end_step) const;

  /// Validation samples read in all: the first ones of the validation set.
  int64_t validation_size() const { return validation_samples_; }
  int64_t validation_batches() const { return evaluation_batches(validation_samples_); }
  int64_t validation_rows(int64_t j) const { return evaluation_rows(validation_samples_, j); }
  std::vector<int64_t> validation_samples(int64_t j) const { return evaluation_samples(validation_samples_, j); }
  std::vector<int64_t> validation_prefetch(int64_t j) const { return evaluation_prefetch(validation_samples_, j); }

  /// Evaluating the first `n` samples of a set (the validation set, or a population's
  /// tournament data) in order, a global batch at a time: the number of batches; the samples
  /// in batch `j` over all ranks (the last batch may be short); this rank's samples of batch
  /// `j`; and what to read ahead while batch `j` is evaluated (batch j + 1's samples, or
  /// nothing after the last batch).
  int64_t evaluation_batches(int64_t n) const;
  int64_t evaluation_rows(int64_t n, int64_t j) const;
  std::vector<int64_t> evaluation_samples(int64_t n, int64_t j) const;
  std::vector<int64_t> evaluation_prefetch(int64_t n, int64_t j) const;

  /// This rank's slice [first_row(rows), first_row(rows) + local_rows(rows)) of a global
  /// batch of `rows` samples; throws ShapeError when the batch leaves a slice empty.
  int64_t local_rows(int64_t rows) const;
  int64_t first_row(int64_t rows) const;
  /// The rows of every slice of a global batch of `rows` samples.
  std::vector<int64_t> slice_rows(int64_t rows) const;

 private:
  const std::vector<int64_t>& cached_order(int64_t epoch) const;

  int64_t train_samples_, validation_samples_, batch_, accumulate_, steps_per_epoch_;
  uint64_t seed_;
  BatchSlot slot_;
  // The two latest epochs' orders: a step and the read-ahead of the next one need at most two,
  // and a permutation of the whole training set is too costly to redo every step.
  struct CachedOrder {
    int64_t epoch = -1;
    std::vector<int64_t> order;
  };
  mutable std::array<CachedOrder, 2> cache_;
  mutable size_t next_cache_slot_ = 0;
};

}  // namespace tessera::train
