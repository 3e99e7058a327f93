// Run under mpirun with 2 ranks: an architecture search over the job's ranks.
//   - two generations of tiny candidates on 2 trainers of 1 rank: every rank ends with the
//     same history and population, and a second run reproduces them exactly;
//   - the same search resumed after its first generation gives the uninterrupted result;
//   - one trainer of 2 ranks (each candidate data-parallel) runs the same space;
//   - more candidates at a time than the ranks allow are refused on every rank.
// Exit status 0 on every rank when all checks pass.
#include <cstdio>
#include <string>

#include "parallel/mpi_check.hpp"
#include "search/tiny_space.hpp"
#include "support/mpi_program.hpp"
#include "tessera/core/error.hpp"
#include "tessera/search/search_run.hpp"

using namespace tessera;
using nlohmann::json;

namespace {

search::SearchState run_search(const json& space, const std::string& dir, int64_t trainers, bool resume = false) {
  search::SearchOptions o;
  o.output_dir = dir;
  o.trainers = trainers;
  o.resume = resume;
  o.progress = false;
  search::SearchRun run(search::SearchSpace(space, "tiny.json"), o, parallel::Communicator::world());
  return run.run();
}

/// The state as numbers, to compare across ranks and runs.
std::vector<double> digest(const search::SearchState& s) {
  std::vector<double> d;
  for (const auto& r : s.history) {
    for (const auto g : r.genome) d.push_back(static_cast<double>(g));
    for (const auto v : r.objectives) d.push_back(v);
  }
  for (const auto p : s.population) d.push_back(static_cast<double>(p));
  return d;
}

bool same_on_every_rank(const std::vector<double>& d) {
  std::vector<double> mine = d, low(d.size());
  for (size_t i = 0; i < d.size(); ++i) low[i] = -d[i];
  parallel::Communicator::world().allreduce_max(mine.data(), static_cast<int64_t>(mine.size()));
  parallel::Communicator::world().allreduce_max(low.data(), static_cast<int64_t>(low.size()));
  for (size_t i = 0; i < d.size(); ++i)
    if (mine[i] != -low[i]) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  testing::MpiProgram program(argc, argv);
  const auto world = parallel::Communicator::world();
  testing::MpiCheckLog log(world);
  if (argc < 2) {
    std::fprintf(stderr, "usage: tessera_search_check OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  try {
    const json space = testing::tiny_search_space();
    const search::SearchState first = run_search(space, dir + "/a", 2);
    log.check(first.history.size() == 8 && first.generation == 1, "two generations of 4 candidates");
    bool trained = true;
    for (const auto& r : first.history) trained = trained && !r.failed && r.objectives[0] > 0;
    log.check(trained, "every candidate trained");
    log.check(same_on_every_rank(digest(first)), "every rank holds the same search");
    const search::SearchState second = run_search(space, dir + "/b", 2);
    log.check(digest(second) == digest(first), "a second run reproduces the search");

    json one = space;
    one["budget"]["generations"] = 0;
    run_search(one, dir + "/c", 2);
    const search::SearchState resumed = run_search(space, dir + "/c", 2, true);
    log.check(digest(resumed) == digest(first), "the resumed search equals the uninterrupted one");

    const search::SearchState wide = run_search(space, dir + "/d", 1);
    log.check(wide.history.size() == 8 && same_on_every_rank(digest(wide)), "one trainer of 2 ranks");

    log.expect_error<ConfigError>([&] { run_search(space, dir + "/e", 4); },
                                  {"--trainers: 4 candidates at a time", "the job has 2"}, "more trainers than ranks");
  } catch (const std::exception& e) {
    return parallel::handle_fatal_error(e);
  }
  return log.exit_status("search_check");
}
