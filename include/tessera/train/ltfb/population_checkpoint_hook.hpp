#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/train/ltfb/population_layout.hpp"
#include "tessera/train/trainer_hook.hpp"

namespace tessera::train {

/// Checkpoints a whole population (PopulationManifest) every `every` steps (0: only at the end)
/// and after the last step: each trainer's first rank writes its trainer's file, the peers
/// share the hyper-parameters (which also tells the job's first rank that every file is
/// written), and the job's first rank replaces the manifest, then removes the files of the
/// manifest it replaced.
class PopulationCheckpointHook final : public TrainerHook {
 public:
  /// `previous_files`: the trainer files of a manifest this run resumed from.
  PopulationCheckpointHook(std::string path, int64_t every, const PopulationLayout& layout, uint64_t seed,
                           std::vector<std::string> previous_files);
  void on_step_end(Trainer& trainer, const StepEnd& step) override;
  void on_training_end(Trainer& trainer, int64_t steps) override;

 private:
  void save(Trainer& trainer, int64_t step);

  std::string path_;
  int64_t every_;
  const PopulationLayout& layout_;
  uint64_t seed_;
  std::vector<std::string> previous_files_;
  int64_t saved_at_ = -1;
};

}  // namespace tessera::train
