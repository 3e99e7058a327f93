#include <cstdio>

#include "commands.hpp"
#include "number_checks.hpp"
#include "tessera/core/atomic_file.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/parallel/communicator.hpp"
#include "tessera/search/search_run.hpp"

namespace tessera::cli {

CLI::App* add_search_command(CLI::App& app, SearchArgs& a) {
  auto* cmd = app.add_subcommand(
      "search",
      "Multi-objective architecture search with NSGA-II: trains candidates drawn from a search space "
      "(a base run config with choices per block and optimizer key, a budget and objectives), K at a time "
      "over the job's ranks, and keeps the Pareto front of e.g. validation loss against cost. Writes "
      "OUTPUT/population.jsonl and OUTPUT/front.jsonl (one line per member per generation), "
      "OUTPUT/front.svg (loss against cost, coloured by generation), OUTPUT/front/<id>.json (the final "
      "front as ready-to-train run configs) and OUTPUT/search_state.json (for --resume) after every "
      "generation. See docs/search.md.");
  cmd->add_option("space", a.space, "Search space (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a.output, "Output directory (created if missing)")->required();
  cmd->add_flag("--resume", a.resume,
                "Continue the search saved in OUTPUT/search_state.json after its last generation");
  cmd->add_option("--trainers", a.trainers,
                  "Candidates trained at a time (overrides budget.trainers); must divide the ranks")
      ->check(integer_in(1, 1 << 20));
  cmd->add_option("--backend", a.backend, "Op backend: auto, kokkos, onednn, cudnn");
  cmd->add_flag("--quiet", a.quiet, "No progress lines");
  return cmd;
}

int run_search(SearchArgs& a) {
  require_writable_folder(a.output, "--output (the search's folder)");
  search::SearchSpace space(read_json_file(a.space), a.space);
  search::SearchOptions options;
  options.output_dir = a.output;
  options.resume = a.resume;
  options.trainers = a.trainers;
  options.backend = a.backend;
  options.progress = !a.quiet;
  search::SearchRun run(std::move(space), options, parallel::Communicator::world());
  const StopSignalHandlers signals(StopMode::after_step);
  const search::SearchState state = run.run();
  if (run.stop_signal() != 0) {
    log::info("stopped by " + signal_name(run.stop_signal()) + "; generations 0 to " +
              std::to_string(state.generation) + " are saved in " + run.output("search_state.json") +
              ": add --resume to continue");
    return stop_exit_code(run.stop_signal());
  }
  if (!a.quiet) {
    std::vector<search::Objectives> points;
    for (const size_t i : state.population) points.push_back(state.history[i].objectives);
    log::info("final front: " + std::to_string(search::non_dominated_sort(points).at(0).size()) +
              " candidate(s), run configs in " + run.output("front/") + ", picture " + run.output("front.svg"));
  }
  return 0;
}

}  // namespace tessera::cli
