#include "tessera/train/ltfb/population_checkpoint_hook.hpp"

#include <algorithm>
#include <cstdio>

#include "tessera/train/checkpoint.hpp"
#include "tessera/train/ltfb/population_checkpoint.hpp"
#include "tessera/train/trainer.hpp"

namespace tessera::train {

PopulationCheckpointHook::PopulationCheckpointHook(std::string path, int64_t every, const PopulationLayout& layout,
                                                   uint64_t seed, std::vector<std::string> previous_files)
    : path_(std::move(path)), every_(every), layout_(layout), seed_(seed), previous_files_(std::move(previous_files)) {}

void PopulationCheckpointHook::on_step_end(Trainer& trainer, const StepEnd& step) {
  if (every_ > 0 && step.step % every_ == 0) save(trainer, step.step);
}

void PopulationCheckpointHook::on_training_end(Trainer& trainer, int64_t steps) {
  if (saved_at_ != steps) save(trainer, steps);
}

void PopulationCheckpointHook::save(Trainer& trainer, int64_t step) {
  const std::string mine = PopulationManifest::trainer_file(path_, step, layout_.trainer());
  if (trainer.group().rank() == 0 || trainer.model().parameters().has_shards())
    save_checkpoint(mine, trainer.model().parameters(), trainer.optimizer(), trainer.progress_at(step),
                    trainer.group().rank() == 0);
  saved_at_ = step;
  // Only the trainers' first ranks write, and they form one peer group: its sum is also the
  // sign that every trainer's file is complete before the manifest names it.
  if (trainer.group().rank() != 0) return;
  PopulationManifest m;
  m.step = step;
  m.trainers = layout_.trainers();
  m.seed = seed_;
  std::vector<double> values;
  for (const auto& [key, value] : trainer.optimizer().hyperparameters()) {
    m.hyperparameter_keys.push_back(key);
    values.push_back(value);
  }
  const size_t width = values.size();
  const std::vector<double> all = layout_.share(values);
  if (layout_.job().rank() != 0) return;
  for (int64_t t = 0; t < m.trainers; ++t) {
    m.files.push_back(PopulationManifest::trainer_file(path_, step, t));
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(width * static_cast<size_t>(t));
    m.hyperparameters.emplace_back(first, first + static_cast<std::ptrdiff_t>(width));
  }
  m.write(path_);
  for (const auto& old : previous_files_)
    if (std::find(m.files.begin(), m.files.end(), old) == m.files.end()) std::remove(old.c_str());
  previous_files_ = m.files;
}

}  // namespace tessera::train
