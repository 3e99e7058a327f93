#include "tessera/search/search_run.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/log.hpp"
#include "tessera/search/front_plot.hpp"

namespace tessera::search {
namespace {

/// The number of trainers: the explicit one, else the most that the population can use and
/// whose ranks each hold a candidate's ranks; it must divide the job.
int64_t trainer_count(const SearchBudget& b, int64_t flag, int64_t ranks) {
  const std::string key = flag > 0 ? "--trainers" : "$.budget.trainers";
  if (ranks % b.ranks_per_candidate != 0)
    throw ConfigError("$.budget.ranks_per_candidate", std::to_string(b.ranks_per_candidate) +
                                                          " ranks per candidate do not divide the job's " +
                                                          std::to_string(ranks) + " ranks");
  const int64_t most = ranks / b.ranks_per_candidate;
  const int64_t asked = flag > 0 ? flag : b.trainers;
  if (asked > 0) {
    if (asked > most)
      throw ConfigError(key, std::to_string(asked) + " candidates at a time of " +
                                 std::to_string(b.ranks_per_candidate) + " rank(s) each need " +
                                 std::to_string(asked * b.ranks_per_candidate) + " ranks; the job has " +
                                 std::to_string(ranks) + ": more candidates at once than the ranks allow");
    if (asked > b.population)
      throw ConfigError(key, std::to_string(asked) + " trainers for a population of " + std::to_string(b.population) +
                                 " would leave trainers idle in every generation");
    return asked;
  }
  for (int64_t k = std::min(most, b.population); k > 1; --k)
    if (ranks % k == 0) return k;
  return 1;
}

std::string number(double v) { return format("%.4g", v); }

void make_directory(const std::string& dir, const std::string& what) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw IoError(dir + ": cannot create the " + what + " directory");
}

}  // namespace

SearchRun::SearchRun(SearchSpace space, SearchOptions options, parallel::Communicator job)
    : space_(std::move(space)),
      options_(std::move(options)),
      job_(std::move(job)),
      nsga_(space_.levels(), space_.budget().seed) {
  for (size_t k = 0; k < space_.objectives().size(); ++k)
    objectives_.push_back(
        make_objective(space_.objectives()[k], space_.introspection(), "$.objectives[" + std::to_string(k) + "]"));
  if (options_.output_dir.empty()) throw ConfigError("--output", "a search needs an output directory");
  if (job_.rank() == 0) {
    make_directory(options_.output_dir, "output");
    make_directory(output("front"), "front");
  }
  const int64_t k = trainer_count(space_.budget(), options_.trainers, job_.size());
  layout_ =
      std::make_unique<train::PopulationLayout>(job_, k, options_.trainers > 0 ? "--trainers" : "$.budget.trainers");
  state_.seed = space_.budget().seed;
  state_.levels = space_.levels();
  state_.objectives = space_.objectives();
  if (options_.resume) {
    const SearchState saved = SearchState::read(output("search_state.json"));
    if (saved.seed != state_.seed || saved.levels != state_.levels || saved.objectives != state_.objectives)
      throw ConfigError("--resume", output("search_state.json") +
                                        " is the state of another search (its seed, choices or objectives differ)");
    state_ = saved;
  }
}

std::string SearchRun::output(const std::string& name) const { return options_.output_dir + "/" + name; }

std::vector<Candidate> SearchRun::validated(std::vector<Genome> genomes, int64_t generation) {
  std::vector<Candidate> out;
  for (size_t i = 0; i < genomes.size(); ++i) {
    Candidate c = space_.materialise(genomes[i]);
    Draws draws(space_.budget().seed, Nsga2::stream(0x7265647261770000ull ^ i, generation));
    int64_t draws_made = 0;
    while (!c.invalid.empty()) {
      if (job_.rank() == 0)
        log::warn("generation " + std::to_string(generation) + ", candidate " + std::to_string(i) + " " +
                  c.choices.dump() + " is invalid, drawn again: " + c.invalid);
      if (++draws_made > space_.budget().max_resamples)
        throw ConfigError(space_.file(), "no valid candidate in " + std::to_string(space_.budget().max_resamples) +
                                             " draws ($.budget.max_resamples): the choices may make every "
                                             "candidate invalid; the last: " +
                                             c.invalid);
      c = space_.materialise(nsga_.random_genome(draws));
    }
    out.push_back(std::move(c));
  }
  return out;
}

Objectives SearchRun::train_one(const Candidate& candidate, uint64_t seed, std::string& failure, int& stop) {
  nlohmann::json config = candidate.config;
  config["training"]["seed"] = seed;
  // Every candidate trains and validates on the same samples.
  if (config.contains("data") && config["data"].is_object() && !config["data"].contains("seed"))
    config["data"]["seed"] = space_.budget().seed;
  train::RunOverrides o;
  o.group = layout_->trainer_group();
  o.progress = false;
  o.backend = options_.backend;
  Objectives values;
  // A candidate's own console lines (graph rewrites, per-epoch validation) would bury the
  // search's: it trains silently, and the search reports it.
  struct Silence {
    int rank = log::rank();
    Silence() { log::set_rank(rank == 0 ? 1 : rank); }
    ~Silence() { log::set_rank(rank); }
  } silence;
  try {
    train::TrainingRun run(config, o);
    const train::TrainingReport report = run.run();
    stop = report.stop_signal;
    if (stop != 0) return Objectives(objectives_.size(), std::numeric_limits<double>::infinity());
    TrainedCandidate trained{run, report, config, options_.backend};
    for (auto& objective : objectives_) values.push_back(objective->measure(trained));
  } catch (const ConfigError&) {
    throw;  // the space's fault (a missing validation set, ...): every candidate would fail
  } catch (const Error& e) {
    failure = e.what();
    values.assign(objectives_.size(), std::numeric_limits<double>::infinity());
  }
  // A diverged candidate is as bad as a failed one; NaN would break the dominance order.
  for (double& v : values)
    if (!std::isfinite(v)) v = std::numeric_limits<double>::infinity();
  return values;
}

std::vector<size_t> SearchRun::evaluate(const std::vector<Candidate>& candidates, int64_t generation) {
  const size_t m = objectives_.size(), width = m + 1;  // the objectives and a failure flag
  const auto k = static_cast<size_t>(layout_->trainers());
  const auto me = static_cast<size_t>(layout_->trainer());
  std::vector<double> all(candidates.size() * width, 0.0);
  const size_t first_serial = state_.history.size();
  for (size_t i = me; i < candidates.size(); i += k) {
    std::string failure;
    const uint64_t seed = space_.budget().seed + 1 + first_serial + i;
    int stop = 0;
    const Objectives v = train_one(candidates[i], seed, failure, stop);
    if (stop != 0) {
      stop_signal_ = stop;
      break;
    }
    std::copy(v.begin(), v.end(), all.begin() + static_cast<std::ptrdiff_t>(i * width));
    all[i * width + m] = failure.empty() ? 0.0 : 1.0;
    if (!failure.empty() && layout_->trainer_group().rank() == 0)
      std::fprintf(stderr, "tessera: warning: %s\n",
                   ("generation " + std::to_string(generation) + ", candidate " + std::to_string(i) +
                    " failed in training: " + failure)
                       .c_str());
  }
  // Each candidate's slot is filled by its trainer alone; the peers' sum gives every rank all.
  layout_->peers().allreduce_sum(all.data(), static_cast<int64_t>(all.size()));
  // A trainer that was asked to stop ends the search for all, after this round.
  double stopped = stop_signal_;
  job_.allreduce_max(&stopped, 1);
  stop_signal_ = static_cast<int>(stopped);
  if (stop_signal_ != 0) return {};
  std::vector<size_t> indices;
  for (size_t i = 0; i < candidates.size(); ++i) {
    CandidateRecord r;
    r.id = "g" + std::to_string(generation) + "c" + std::to_string(i);
    r.generation = generation;
    r.genome = candidates[i].genome;
    r.choices = candidates[i].choices;
    r.objectives.assign(all.begin() + static_cast<std::ptrdiff_t>(i * width),
                        all.begin() + static_cast<std::ptrdiff_t>(i * width + m));
    r.failed = all[i * width + m] > 0.5;
    r.config = candidates[i].config;
    indices.push_back(state_.history.size());
    state_.history.push_back(std::move(r));
  }
  return indices;
}

std::vector<Genome> SearchRun::new_candidates(int64_t g) const {
  const SearchBudget& b = space_.budget();
  const auto population = static_cast<size_t>(b.population);
  // Every network the search trained, so that no generation trains one again: a repeat
  // would spend a candidate's training on a second noisy reading of a known network.
  std::set<std::string> seen;
  for (const auto& r : state_.history) seen.insert(space_.network_of(r.genome));
  auto is_seen = [&](const Genome& genome) { return seen.count(space_.network_of(genome)) > 0; };
  std::vector<Genome> kept;
  size_t repeats = 0;
  // A candidate still not new after the redraws (a small space, a converged population) is
  // left out rather than trained again.
  auto keep = [&](Genome genome) {
    if (is_seen(genome)) return void(++repeats);
    seen.insert(space_.network_of(genome));
    kept.push_back(std::move(genome));
  };
  if (g == 0) {
    Draws draws(b.seed, Nsga2::stream(0x7265647261770000ull, g));
    for (Genome genome : nsga_.initial(population)) keep(is_seen(genome) ? nsga_.random_new(is_seen, draws) : genome);
  } else if (b.algorithm == "random") {
    Draws draws(b.seed, Nsga2::stream(0x72616e646f6dull, g));
    for (size_t i = 0; i < population; ++i) keep(nsga_.random_new(is_seen, draws));
  } else {
    std::vector<Genome> parents;
    std::vector<Objectives> parent_objectives;
    for (const size_t i : state_.population) {
      parents.push_back(state_.history[i].genome);
      parent_objectives.push_back(state_.history[i].objectives);
    }
    // Offspring that repeat a trained network (or each other) are mutated until new.
    Draws draws(b.seed, Nsga2::stream(0x6e6577000000ull, g));
    for (auto& genome : nsga_.offspring(parents, parent_objectives, population, g))
      keep(nsga_.made_new(std::move(genome), is_seen, draws));
  }
  if (repeats > 0 && !kept.empty() && job_.rank() == 0)
    log::info("search: generation " + std::to_string(g) + " trains " + std::to_string(kept.size()) +
              " new network(s); " + std::to_string(repeats) +
              " candidate(s) found no network not yet trained and are left out");
  return kept;
}

SearchState SearchRun::run() {
  const SearchBudget& b = space_.budget();
  const auto population = static_cast<size_t>(b.population);
  if (options_.progress && job_.rank() == 0)
    log::info("search: " + std::to_string(space_.genes().size()) + " choices, population " +
              std::to_string(b.population) + ", " + std::to_string(b.generations) + " generation(s) after the first, " +
              std::to_string(b.steps) + " steps per candidate; " + std::to_string(layout_->trainers()) +
              " trainer(s) of " + std::to_string(layout_->ranks_per_trainer()) + " rank(s)");
  for (int64_t g = state_.generation + 1; g <= b.generations; ++g) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Genome> genomes = new_candidates(g);
    if (genomes.empty()) {
      if (job_.rank() == 0)
        log::info("search: every candidate of generation " + std::to_string(g) +
                  " would retrain a network already trained (the space has no new network near this "
                  "population); the search stops after generation " + std::to_string(g - 1));
      break;
    }
    const std::vector<size_t> trained = evaluate(validated(std::move(genomes), g), g);
    if (stop_signal_ != 0) break;  // the generation is not saved: a resumed search repeats it
    // Elitist (μ+λ): parents and offspring compete for the next population.
    std::vector<size_t> pool = state_.population;
    pool.insert(pool.end(), trained.begin(), trained.end());
    std::vector<Objectives> points;
    for (const size_t i : pool) points.push_back(state_.history[i].objectives);
    std::vector<size_t> next;
    for (const size_t k : select_survivors(points, population)) next.push_back(pool[k]);
    state_.population = next;
    state_.generation = g;
    if (job_.rank() == 0) {
      write_outputs();
      state_.write(output("search_state.json"));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options_.progress && job_.rank() == 0) report_generation(trained, seconds);
    job_.barrier();
  }
  return state_;
}

void SearchRun::report_generation(const std::vector<size_t>& trained, double seconds) const {
  for (const size_t i : trained) {
    const CandidateRecord& r = state_.history[i];
    std::string line = "  " + r.id + " " + r.choices.dump() + ":";
    if (r.failed) line += " failed";
    for (size_t m = 0; m < r.objectives.size(); ++m) line += " " + state_.objectives[m] + " " + number(r.objectives[m]);
    log::info(line);
  }
  std::vector<Objectives> points;
  for (const size_t i : state_.population) points.push_back(state_.history[i].objectives);
  const auto front = non_dominated_sort(points).at(0);
  log::info("generation " + std::to_string(state_.generation) + ": " + std::to_string(trained.size()) +
            " candidates trained in " + number(seconds) + " s; front of " + std::to_string(front.size()) +
            " in the population of " + std::to_string(state_.population.size()));
}

void SearchRun::write_outputs() const {
  auto record = [&](size_t i, int64_t generation, int64_t rank) {
    const CandidateRecord& r = state_.history[i];
    nlohmann::json objectives = nlohmann::json::object();
    for (size_t m = 0; m < r.objectives.size(); ++m)
      objectives[state_.objectives[m]] = std::isfinite(r.objectives[m]) ? nlohmann::json(r.objectives[m]) : nullptr;
    nlohmann::json j{{"generation", generation}, {"id", r.id},  {"born", r.generation}, {"choices", r.choices},
                     {"objectives", objectives}, {"rank", rank}};
    if (r.failed) j["failed"] = true;
    return j.dump() + "\n";
  };
  // Every generation's population (and its front, rank 0) from the history: the files are
  // rewritten whole, so a resumed search leaves them as the uninterrupted one would.
  std::string population_text, front_text;
  std::vector<size_t> population;
  std::vector<size_t> last_front;
  for (int64_t g = 0; g <= state_.generation; ++g) {
    // The population after generation g: replayed from the recorded history.
    std::vector<size_t> pool = population;
    for (size_t i = 0; i < state_.history.size(); ++i)
      if (state_.history[i].generation == g) pool.push_back(i);
    std::vector<Objectives> points;
    for (const size_t i : pool) points.push_back(state_.history[i].objectives);
    population.clear();
    for (const size_t k : select_survivors(points, static_cast<size_t>(space_.budget().population)))
      population.push_back(pool[k]);
    points.clear();
    for (const size_t i : population) points.push_back(state_.history[i].objectives);
    const Ranking ranking = rank_population(points);
    last_front.clear();
    for (size_t k = 0; k < population.size(); ++k) {
      population_text += record(population[k], g, ranking.rank[k]);
      if (ranking.rank[k] == 0) {
        front_text += record(population[k], g, 0);
        last_front.push_back(population[k]);
      }
    }
  }
  write_text_atomically(output("population.jsonl"), population_text);
  write_text_atomically(output("front.jsonl"), front_text);
  // Members that left the front leave the folder too: it holds the final front alone.
  std::set<std::string> keep;
  for (const size_t i : last_front) keep.insert(state_.history[i].id + ".json");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(output("front"), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 6 && name[0] == 'g' && name.substr(name.size() - 5) == ".json" && !keep.count(name))
      std::filesystem::remove(entry.path(), ec);
  }
  for (const size_t i : last_front) {
    Candidate c;
    c.config = state_.history[i].config;
    write_text_atomically(output("front/" + state_.history[i].id + ".json"), space_.ready_to_train(c).dump(2) + "\n");
  }
  write_text_atomically(output("front.svg"), front_svg(state_, last_front, 1, 0));
}

}  // namespace tessera::search
