// Run under mpirun at a power-of-two rank count: every rank holds a known gradient; Adasum
// over the ranks must equal the pairwise formula applied by hand in the recursive-doubling
// order (((g0, g1), (g2, g3)), ...) and be bit-identical on every rank; the gradient reducer
// in Adasum mode must give the same bits from the ranks' contributions; and a short
// data-parallel training run with "gradient_combination": "adasum" must train (finite
// losses, replicas checked after every step) and end with other weights than summing.
// Exit status 0 on every rank when all holds. At other rank counts it must fail naming the
// power-of-two requirement.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "support/mpi_program.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/parallel/adasum.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/parallel/gradient_reducer.hpp"
#include "tessera/train/training_run.hpp"

using namespace tessera;

namespace {

// Segments: long (several chunks), short, empty, one where rank 1's gradient is zero, one element.
const std::vector<int64_t> kOffsets{0, 5000, 5007, 5007, 5100, 5101};

std::vector<float> gradient_of_rank(int rank) {
  std::vector<float> g(static_cast<size_t>(kOffsets.back()));
  for (size_t i = 0; i < g.size(); ++i) {
    // A shared direction plus a per-rank one: neither parallel nor orthogonal.
    g[i] = rng::normal(11, 0, i) + 0.7f * rng::normal(11, static_cast<uint64_t>(rank) + 1, i);
    if (rank == 1 && i >= 5007 && i < 5100) g[i] = 0.0f;
  }
  return g;
}

// The pairwise formula, written out independently of the library, segment by segment.
std::vector<float> adasum_by_hand(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> out(a.size());
  for (size_t s = 0; s + 1 < kOffsets.size(); ++s) {
    const auto lo = static_cast<size_t>(kOffsets[s]), hi = static_cast<size_t>(kOffsets[s + 1]);
    double dot = 0, aa = 0, bb = 0;
    for (size_t i = lo; i < hi; ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      aa += static_cast<double>(a[i]) * a[i];
      bb += static_cast<double>(b[i]) * b[i];
    }
    const double wa = aa > 0 ? 1 - dot / (2 * aa) : 1, wb = bb > 0 ? 1 - dot / (2 * bb) : 1;
    for (size_t i = lo; i < hi; ++i) out[i] = static_cast<float>(wa * a[i] + wb * b[i]);
  }
  return out;
}

// Ranks [first, first + count) combined as recursive doubling pairs them: each half first.
std::vector<float> tree_by_hand(int first, int count) {
  if (count == 1) return gradient_of_rank(first);
  return adasum_by_hand(tree_by_hand(first, count / 2), tree_by_hand(first + count / 2, count / 2));
}

bool same_bits_on_every_rank(const parallel::Communicator& world, const std::vector<float>& mine) {
  std::vector<float> all(mine.size() * static_cast<size_t>(world.size()));
  parallel::check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(),
                                    static_cast<int>(mine.size()), MPI_FLOAT, world.handle()),
                      "MPI_Allgather");
  for (int r = 0; r < world.size(); ++r)
    if (std::memcmp(all.data() + static_cast<size_t>(r) * mine.size(), mine.data(), mine.size() * sizeof(float)) != 0)
      return false;
  return true;
}

double max_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0;
  for (size_t i = 0; i < a.size(); ++i) gap = std::max(gap, static_cast<double>(std::abs(a[i] - b[i])));
  return gap;
}

/// The reducer gets contributions (gradient / ranks) and must return `adasum`, the Adasum of
/// the gradients.
bool reducer_returns(const std::vector<float>& adasum, const parallel::Communicator& world) {
  auto contribution = gradient_of_rank(world.rank());
  for (auto& x : contribution) x /= static_cast<float>(world.size());
  Tensor grads(Shape{static_cast<int64_t>(kOffsets.back())});
  grads.copy_from_host(contribution);
  {
    parallel::GradientReducer reducer(grads, parallel::Adasum(world, kOffsets, "adasum_check"));
    reducer.ready_from(0);
    reducer.finish();
  }
  return grads.to_host() == adasum;
}

nlohmann::json adasum_training_config() {
  return nlohmann::json::parse(R"({
    "model": {"input": {"channels": 2, "size": [6, 6, 6]},
              "layers": [{"name": "c1", "type": "conv3d", "filters": 4, "padding": 1}, {"type": "leaky_relu"},
                         {"type": "max_pool3d"}, {"type": "flatten"}, {"name": "d", "type": "dense", "units": 4}]},
    "loss": {"type": "mse"},
    "optimizer": {"type": "sgd", "lr": 0.005, "momentum": 0.9},
    "data": {"source": "synthetic_fields", "samples": 32, "size": 6, "channels": 2},
    "training": {"epochs": 4, "batch_size": 8, "seed": 5, "log_every": 1,
                 "gradient_combination": "adasum", "check_replicas": true}})");
}

/// Adasum over accumulated micro-batches (each rank's contribution the sum of its two
/// micro-batches, combined once per step): `config` with batches of 4 accumulated twice trains
/// its 16 steps, and stays one model on every rank.
bool trains_over_accumulated_batches(nlohmann::json config, const train::RunOverrides& overrides,
                                     const parallel::Communicator& world) {
  config["training"]["batch_size"] = 4;
  config["training"]["accumulate"] = 2;
  train::TrainingRun run(config, overrides);
  const auto report = run.run();
  const auto& losses = report.step_losses;
  return report.steps == 16 && std::isfinite(losses.back()) && losses.back() < losses.front() &&
         same_bits_on_every_rank(world, run.model().parameters().values().to_host());
}

}  // namespace

int main(int argc, char* argv[]) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  int failed = 0;
  try {
    parallel::Adasum adasum(world, kOffsets, "adasum_check");
    const auto n = static_cast<int64_t>(kOffsets.back());
    Tensor g(Shape{n});
    g.copy_from_host(gradient_of_rank(world.rank()));
    adasum.allreduce(g);
    const auto got = g.to_host();
    const auto expected = tree_by_hand(0, world.size());
    double worst = 0, scale = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - expected[i])));
      scale = std::max(scale, static_cast<double>(std::abs(expected[i])));
    }
    const bool identical = same_bits_on_every_rank(world, got);

    const bool reducer_equal = reducer_returns(got, world);

    // End to end: a short run combining by Adasum, replicas compared after every step. Adasum
    // adds gradients where they are orthogonal, so its steps are larger than the average's:
    // the rate is a quarter of data_parallel_equivalence's, at which summing runs stably.
    auto config = adasum_training_config();
    train::RunOverrides overrides;
    overrides.progress = false;
    train::TrainingRun adasum_run(config, overrides);
    const auto report = adasum_run.run();
    const bool accumulated_trained = trains_over_accumulated_batches(config, overrides, world);
    config["training"]["gradient_combination"] = "sum";
    train::TrainingRun sum_run(config, overrides);
    sum_run.run();
    const auto wa = adasum_run.model().parameters().values().to_host();
    const auto ws = sum_run.model().parameters().values().to_host();
    const double weight_gap = max_gap(wa, ws);
    const bool finite =
        std::all_of(report.step_losses.begin(), report.step_losses.end(), [](double l) { return std::isfinite(l); });
    const auto& losses = report.step_losses;
    if (losses.size() != 16) throw Error("the adasum run made " + std::to_string(losses.size()) + " steps, not 16");
    double late_loss = 0;  // the mean of the last 4 steps
    for (size_t i = losses.size() - 4; i < losses.size(); ++i) late_loss += losses[i] / 4;
    const bool trained =
        report.steps == 16 && finite && late_loss < losses.front() && same_bits_on_every_rank(world, wa);
    // On one rank Adasum is the identity and both runs agree; on several they must not.
    const bool differs = world.size() == 1 ? weight_gap == 0 : weight_gap > 1e-6;

    failed = worst > 1e-6 * scale || !identical || !reducer_equal || !trained || !differs || !accumulated_trained;
    std::printf(
        "rank %d of %d: adasum vs formula by hand max difference %.2e (largest %.2f), bit-identical on "
        "all ranks: %s, reducer equal: %s; adasum training: %lld steps, loss %.4f -> %.4f (last 4 steps), "
        "max weight gap to summing %.2e; with 2 accumulated micro-batches: %s: %s\n",
        world.rank(), world.size(), worst, scale, identical ? "yes" : "NO", reducer_equal ? "yes" : "NO",
        static_cast<long long>(report.steps), losses.front(), late_loss, weight_gap,
        accumulated_trained ? "trains" : "DOES NOT TRAIN", failed ? "FAILED" : "ok");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return program.exit_status(failed);
}
