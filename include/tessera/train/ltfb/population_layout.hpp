#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/parallel/communicator.hpp"

namespace tessera::train {

/// How the ranks of a job form a population of trainers. Trainer t holds the consecutive ranks
/// [t·n, (t+1)·n), n = job size / trainers: launchers place consecutive ranks together, so a
/// trainer's collectives stay inside a node where they can. The ranks at the same position in
/// their trainers form a peer group, whose rank k belongs to trainer k: under one
/// distribution every trainer cuts its model alike, so a rank and its peers hold the same
/// block of the model, and a tournament moves models between peers point to point.
class PopulationLayout {
 public:
  /// Collective over `job`. Throws ConfigError naming `where` unless `trainers` divides the
  /// job's ranks.
  PopulationLayout(const parallel::Communicator& job, int64_t trainers, const std::string& where);

  int64_t trainers() const { return trainers_; }
  int64_t trainer() const { return trainer_; }
  int64_t ranks_per_trainer() const { return ranks_per_trainer_; }
  const parallel::Communicator& job() const { return job_; }
  /// This rank's trainer's ranks.
  const parallel::Communicator& trainer_group() const { return trainer_group_; }
  /// This rank's peers, one per trainer, ranked by trainer.
  const parallel::Communicator& peers() const { return peers_; }
  /// Every trainer's `values` (the same count on all), in trainer order, on every rank of
  /// the peer group: each trainer fills its own slot and the peers sum (collective over
  /// peers()).
  std::vector<double> share(const std::vector<double>& values) const;

 private:
  int64_t trainers_, trainer_ = 0, ranks_per_trainer_ = 1;
  parallel::Communicator job_, trainer_group_, peers_;
};

}  // namespace tessera::train
