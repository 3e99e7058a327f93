// Run under mpirun with 2 or 4 ranks: a population of trainers (LTFB) against its contracts.
//   - the tournament pairs are the same on every rank;
//   - after a pairwise round both partners hold the winner's parameters, buffers, optimizer
//     state and hyper-parameters bit for bit (before it they differ), also when each trainer
//     is itself split in depth (argument "depth": 2 ranks per trainer on 4 ranks);
//   - with truncation selection the worst trainer holds the best one's state;
//   - a population is reproducible run to run, and a run resumed from a checkpoint taken
//     between two rounds gives the uninterrupted run's tournament log and weights;
//   - trainer counts that do not divide the ranks, and a tournament set too large, are
//     refused on every rank with the key named.
// Exit status 0 on every rank when all checks pass.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "parallel/mpi_check.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/error.hpp"
#include "tessera/train/ltfb/population_checkpoint.hpp"
#include "tessera/train/ltfb/population_run.hpp"
#include "tessera/train/ltfb/tournament_pairing.hpp"
#include "tessera/train/trainer.hpp"
#include "tessera/train/trainer_state.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

json population_config(int64_t trainers, const std::string& selection, const json& distribution) {
  json c = json::parse(R"({
    "model": {"input": {"channels": 2, "size": [8, 8, 8]},
              "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1},
                         {"name": "bn", "type": "batch_norm"}, {"type": "leaky_relu"}, {"type": "max_pool3d"},
                         {"name": "c2", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "elu"},
                         {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "sgd", "lr": 0.02, "momentum": 0.9},
    "data": {"source": "synthetic_fields", "samples": 64, "validation_samples": 8, "size": 8, "channels": 2},
    "training": {"epochs": 1, "batch_size": 4, "seed": 11, "log_every": 1,
                 "ltfb": {"round_steps": 2, "tournament_samples": 4,
                          "hyperparameters": {"lr": {"min": 0.005, "max": 0.05, "scale": "log"},
                                              "momentum": {"min": 0.5, "max": 0.95}}}}})");
  c["training"]["ltfb"]["trainers"] = trainers;
  c["training"]["ltfb"]["selection"] = selection;
  if (selection == "truncation") c["training"]["ltfb"]["perturb"] = true;
  if (!distribution.is_null()) c["model"]["distribution"] = distribution;
  return c;
}

train::RunOverrides quiet(int64_t max_steps) {
  train::RunOverrides o;
  o.progress = false;
  o.max_steps = max_steps;
  return o;
}

bool same_state(const train::TrainerState& a, const train::TrainerState& b) {
  auto same = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
  };
  return same(a.values, b.values) && same(a.buffers, b.buffers) && same(a.optimizer_state, b.optimizer_state) &&
         a.optimizer_steps == b.optimizer_steps && same(a.hyperparameters, b.hyperparameters);
}

/// FNV-1a of a state's bytes: trainers compare states through their peers without moving them.
double state_hash(const train::TrainerState& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  add(s.values.data(), s.values.size() * 4);
  add(s.buffers.data(), s.buffers.size() * 4);
  add(s.optimizer_state.data(), s.optimizer_state.size() * 4);
  add(s.hyperparameters.data(), s.hyperparameters.size() * 8);
  return static_cast<double>(h >> 12);  // exact in a double
}

/// Captures this trainer's state after `step`, and every trainer's hash of it.
class StateProbe final : public train::TrainerHook {
 public:
  StateProbe(int64_t step, const train::PopulationLayout& layout) : step_(step), layout_(layout) {}
  void on_step_end(train::Trainer& trainer, const train::StepEnd& step) override {
    if (step.step != step_) return;
    state = train::TrainerState::capture(trainer.model().parameters(), trainer.optimizer());
    hashes = layout_.share({state_hash(state)});
  }
  train::TrainerState state;
  std::vector<double> hashes;

 private:
  int64_t step_;
  const train::PopulationLayout& layout_;
};

/// Runs `run` (2 steps, its round after step 2) with probes after steps 1 and 2: the states
/// before and after the round.
std::pair<const StateProbe*, const StateProbe*> run_round_between_probes(train::PopulationRun& run) {
  auto before = std::make_unique<StateProbe>(1, run.layout());
  auto after = std::make_unique<StateProbe>(2, run.layout());
  const StateProbe* b = before.get();
  const StateProbe* a = after.get();
  run.trainer_run().trainer().add_hook(std::move(before));
  run.trainer_run().trainer().add_hook(std::move(after));
  run.run();
  return {b, a};
}

/// The "tournament" records of a metrics log, without their timings.
std::vector<json> tournament_records(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j["event"] != "tournament") continue;
    j.erase("seconds");
    out.push_back(j);
  }
  return out;
}

/// The trainer's state when `run` ends after `max_steps`.
train::TrainerState final_state(train::PopulationRun& run) {
  return train::TrainerState::capture(run.trainer_run().model().parameters(), run.trainer_run().trainer().optimizer());
}

/// Pairs computed alone on every rank agree.
void check_pairs_agree(const parallel::Communicator& world, testing::MpiCheckLog& log) {
  for (uint64_t seed = 0; seed < 20; ++seed)
    for (int64_t k = 2; k <= 7; ++k) {
      double h = 0;
      for (const auto& [a, b] : train::tournament_pairs(seed, 3, k)) h = h * 31 + static_cast<double>(a * 8 + b);
      double extremes[2] = {h, -h};
      world.allreduce_max(extremes, 2);
      log.check(extremes[0] == -extremes[1], "pairs of seed " + std::to_string(seed) + " differ between ranks");
    }
}

/// Pairwise: partners differ before round 1 (own draws), hold one state after it.
void check_pairwise_round(testing::MpiCheckLog& log, int64_t trainers, const json& distribution) {
  train::PopulationRun run(population_config(trainers, "pairwise", distribution), quiet(2), 0);
  const auto [b, a] = run_round_between_probes(run);
  const auto pairs = train::tournament_pairs(11, 1, trainers);
  for (const auto& [x, y] : pairs) {
    log.check(b->hashes[static_cast<size_t>(x)] != b->hashes[static_cast<size_t>(y)],
              "trainers " + std::to_string(x) + " and " + std::to_string(y) + " already equal before the round");
    log.check(a->hashes[static_cast<size_t>(x)] == a->hashes[static_cast<size_t>(y)],
              "trainers " + std::to_string(x) + " and " + std::to_string(y) + " differ after their tournament");
  }
  // Bit for bit, each rank against its partner's corresponding rank.
  const int64_t me = run.layout().trainer();
  for (const auto& [x, y] : pairs)
    if (x == me || y == me) {
      const auto theirs = a->state.exchange(run.layout().peers(), static_cast<int>(x == me ? y : x));
      log.check(same_state(a->state, theirs), "partner states are not bit-identical after the round");
    }
}

/// Truncation: the worst trainer takes the best one's model; one state fewer in the population.
void check_truncation_round(testing::MpiCheckLog& log, int64_t trainers, const json& distribution) {
  if (trainers < 2) return;
  train::PopulationRun run(population_config(trainers, "truncation", distribution), quiet(2), 0);
  const auto [b, a] = run_round_between_probes(run);
  std::set<double> distinct_before(b->hashes.begin(), b->hashes.end());
  log.check(static_cast<int64_t>(distinct_before.size()) == trainers, "truncation: trainers equal before");
  // Perturbation changes the loser's hyper-parameters: compare models without them.
  train::TrainerState model_only = a->state;
  model_only.hyperparameters.clear();
  model_only.optimizer_steps = 0;
  const std::vector<double> model_hashes = run.layout().share({state_hash(model_only)});
  std::set<double> distinct_models(model_hashes.begin(), model_hashes.end());
  log.check(static_cast<int64_t>(distinct_models.size()) == trainers - 1,
            "truncation: " + std::to_string(distinct_models.size()) + " distinct models after the round, expected " +
                std::to_string(trainers - 1));
}

/// Reproducible, and a resumed run continues the uninterrupted one.
void check_resume(const parallel::Communicator& world, testing::MpiCheckLog& log, int64_t trainers,
                  const json& distribution, const std::string& dir) {
  const json config = population_config(trainers, "pairwise", distribution);
  train::RunOverrides whole = quiet(8);
  whole.metrics_file = dir + "/population_whole.jsonl";
  train::PopulationRun first(config, whole, 0);
  first.run();
  const train::TrainerState uninterrupted = final_state(first);
  train::PopulationRun again(config, whole, 0);
  again.run();
  log.check(same_state(final_state(again), uninterrupted), "a second identical run ends elsewhere");
  const auto whole_log = world.rank() == 0 ? tournament_records(whole.metrics_file) : std::vector<json>{};

  train::RunOverrides part = quiet(3);  // stops between rounds 1 (step 2) and 2 (step 4)
  part.checkpoint_file = dir + "/population.ckpt";
  train::PopulationRun head(config, part, 0);
  head.run();
  train::RunOverrides rest = quiet(8);
  rest.resume_file = part.checkpoint_file;
  rest.checkpoint_file = part.checkpoint_file;
  rest.metrics_file = dir + "/population_resumed.jsonl";
  train::PopulationRun tail(config, rest, 0);
  tail.run();
  log.check(same_state(final_state(tail), uninterrupted), "the resumed run ends elsewhere than the uninterrupted one");
  if (world.rank() == 0) {
    const auto resumed_log = tournament_records(rest.metrics_file);
    log.check(whole_log.size() == 4 && resumed_log.size() == 3, "expected 4 and 3 tournament records");
    for (size_t i = 0; i < resumed_log.size() && i + 1 < whole_log.size(); ++i)
      log.check(resumed_log[i] == whole_log[i + 1], "tournament record " + std::to_string(i + 2) + " differs: " +
                                                        resumed_log[i].dump() + " vs " + whole_log[i + 1].dump());
    // The step-3 files were replaced by the final step's.
    log.check(!std::ifstream(train::PopulationManifest::trainer_file(part.checkpoint_file, 3, 0)).good(),
              "the replaced manifest's trainer files were not removed");
  }
}

/// Bad input, refused on every rank alike.
void check_bad_input(const parallel::Communicator& world, testing::MpiCheckLog& log, int64_t trainers,
                     const json& distribution) {
  log.expect_error<ConfigError>([&] { train::PopulationRun(population_config(3, "pairwise", json()), quiet(2), 0); },
                                {"3 trainers do not divide the " + std::to_string(world.size()) + " ranks"},
                                "3 trainers");
  log.expect_error<ConfigError>(
      [&] {
        json c = population_config(trainers, "pairwise", distribution);
        c["training"]["ltfb"]["tournament_samples"] = 60;
        train::PopulationRun(c, quiet(2), 0);
      },
      {"$.training.ltfb.tournament_samples", "leaves fewer than one batch"}, "a tournament set too large");
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  const bool depth = argc > 1 && std::string(argv[1]) == "depth";
  try {
    if (argc < 3) throw Error("usage: population_check plain|depth DIRECTORY (a folder of this test's own)");
    const std::string dir = argv[2];
    check_pairs_agree(world, log);
    const int64_t trainers = depth ? world.size() / 2 : world.size();
    const json distribution = depth ? json{{"depth", 2}} : json();
    check_pairwise_round(log, trainers, distribution);
    check_truncation_round(log, trainers, distribution);
    check_resume(world, log, trainers, distribution, dir);
    check_bad_input(world, log, trainers, distribution);
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("population_check");
}
