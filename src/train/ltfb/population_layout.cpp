#include "tessera/train/ltfb/population_layout.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"

namespace tessera::train {

PopulationLayout::PopulationLayout(const parallel::Communicator& job, int64_t trainers, const std::string& where)
    : trainers_(trainers), job_(job) {
  if (trainers < 1 || job.size() % trainers != 0)
    throw ConfigError(where, std::to_string(trainers) + " trainers do not divide the " + std::to_string(job.size()) +
                                 " ranks of the job: launch a multiple of " + std::to_string(trainers) +
                                 " ranks, or choose a number of trainers that divides " + std::to_string(job.size()));
  ranks_per_trainer_ = job.size() / trainers;
  trainer_ = job.rank() / ranks_per_trainer_;
  const auto position = static_cast<int>(job.rank() % ranks_per_trainer_);
  trainer_group_ = job.split(static_cast<int>(trainer_), position);
  peers_ = job.split(position, static_cast<int>(trainer_));
}

std::vector<double> PopulationLayout::share(const std::vector<double>& values) const {
  const size_t width = values.size();
  std::vector<double> all(width * static_cast<size_t>(trainers_), 0.0);
  std::copy(values.begin(), values.end(), all.begin() + static_cast<std::ptrdiff_t>(width * trainer_));
  peers_.allreduce_sum(all.data(), static_cast<int64_t>(all.size()));
  return all;
}

}  // namespace tessera::train
