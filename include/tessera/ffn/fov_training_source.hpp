#pragma once
// The training batches of a flood-filling network: every row of the global batch is a slot
// that runs one example's FOV sequence after another, each step one FOV per slot.
#include <memory>
#include <optional>
#include <vector>

#include "tessera/ffn/fov_example.hpp"
#include "tessera/train/batch_source.hpp"

namespace tessera::ffn {

/// Feeds a Trainer FOVs that follow the network's predictions. A rank holds the slots of its
/// rows; a slot's k-th example starts at the seed drawn from (seed, slot, k), so the examples
/// are the same whichever rank runs a slot, and ranks × local slots equal one rank holding all
/// of them (data parallelism changes who computes, not what). With gradient accumulation each
/// micro-batch of a step has slots of its own.
class FovTrainingSource : public train::BatchSource {
 public:
  /// `first_slot`: the global index of this rank's first row; `rows`: its rows per micro-batch;
  /// `global_rows`: the rows of a micro-batch over all ranks.
  FovTrainingSource(std::shared_ptr<const std::vector<LabeledVolume>> volumes, const FfnOptions& options, uint64_t seed,
                    int64_t first_slot, int64_t rows, int64_t global_rows, int64_t accumulate,
                    const std::string& where);

  void load(int64_t step, int64_t micro, const Tensor& inputs, const Tensor& targets) override;
  void observe(const Tensor& predictions) override;

  /// Examples finished on this rank and the FOVs they took (a measure of how far the
  /// network's predictions move the FOV).
  int64_t examples_finished() const { return finished_; }
  int64_t positions_finished() const { return finished_positions_; }

 private:
  struct Slot {
    int64_t id = 0;       // global slot index
    int64_t started = 0;  // examples started in it
    std::optional<FovExample> example;
  };

  std::shared_ptr<const std::vector<LabeledVolume>> volumes_;
  FfnOptions options_;
  uint64_t seed_;
  SeedSampler sampler_;
  std::vector<Slot> slots_;  // [micro][row]
  int64_t rows_;
  int64_t micro_ = 0;  // the micro-batch load() gave last
  std::vector<float> inputs_, targets_;
  int64_t finished_ = 0, finished_positions_ = 0;
};

}  // namespace tessera::ffn
