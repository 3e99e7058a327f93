#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "support/scratch_folder.hpp"
#include "search/tiny_space.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/stop_request.hpp"
#include "tessera/search/search_run.hpp"

using namespace tessera;
using namespace tessera::search;
using nlohmann::json;

namespace {

/// A fresh folder under the temporary directory, removed at scope exit.
struct Folder {
  testing::ScratchFolder scratch{"tessera_search"};
  const std::string& path = scratch.path();
};

SearchState run_search(const json& space, const std::string& dir, bool resume = false, int64_t trainers = 0) {
  SearchOptions o;
  o.output_dir = dir;
  o.resume = resume;
  o.trainers = trainers;
  o.progress = false;
  SearchRun run(SearchSpace(space, "tiny.json"), o, parallel::Communicator::world());
  return run.run();
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A search trains, writes its outputs and reproduces from its seed", "[search][run]") {
  Folder a, b;
  const SearchState s = run_search(testing::tiny_search_space(), a.path);
  REQUIRE(s.history.size() == 8);  // two generations of 4
  CHECK(s.generation == 1);
  CHECK(s.population.size() == 4);
  for (const auto& r : s.history) {
    CHECK_FALSE(r.failed);
    REQUIRE(r.objectives.size() == 3);
    CHECK(r.objectives[0] > 0);                             // a loss
    CHECK(r.objectives[1] > 100);                           // parameters
    CHECK((r.objectives[2] >= 0 && r.objectives[2] <= 1));  // a mean |correlation|
  }
  CHECK(lines_of(a.path + "/population.jsonl").size() == 8);
  const auto front = lines_of(a.path + "/front.jsonl");
  REQUIRE_FALSE(front.empty());
  const json last = json::parse(front.back());
  CHECK(last["generation"] == 1);
  // The final front's members are ready-to-train run configs.
  const json config = json::parse(std::ifstream(a.path + "/front/" + last["id"].get<std::string>() + ".json"));
  CHECK(config["training"] == testing::tiny_search_space()["base"]["training"]);
  CHECK(config["model"]["layers"].is_array());
  const auto svg = lines_of(a.path + "/front.svg");
  REQUIRE_FALSE(svg.empty());
  CHECK(svg.front().rfind("<svg", 0) == 0);
  // Same seed, same search.
  const SearchState again = run_search(testing::tiny_search_space(), b.path);
  REQUIRE(again.history.size() == s.history.size());
  for (size_t i = 0; i < s.history.size(); ++i) {
    CHECK(again.history[i].genome == s.history[i].genome);
    CHECK(again.history[i].objectives == s.history[i].objectives);
  }
  CHECK(again.population == s.population);
}

TEST_CASE("A search trains no network twice, whatever genes say it", "[search][run]") {
  // Without c2 its filters and kernel genes change nothing; two genomes that differ only there
  // are one network, which the search must not spend a second training on.
  for (const std::string algorithm : {"nsga2", "random"}) {
    json space = testing::tiny_search_space();
    space["budget"]["generations"] = 4;
    space["budget"]["algorithm"] = algorithm;
    space["objectives"] = {"validation_loss", "parameters"};
    space.erase("introspection");
    Folder dir;
    const SearchState s = run_search(space, dir.path);
    REQUIRE(s.history.size() == 20);
    std::set<std::string> trained;
    for (const auto& r : s.history) {
      const std::string network = r.config["model"].dump() + r.config["optimizer"].dump();
      INFO(algorithm << " " << r.id << " " << r.choices.dump());
      // The first generation is drawn as it comes; every later one is new.
      if (r.generation > 0) CHECK(trained.count(network) == 0);
      trained.insert(network);
    }
  }
}

TEST_CASE("A resumed search continues as the uninterrupted one", "[search][run]") {
  Folder whole, split;
  json space = testing::tiny_search_space();
  const SearchState uninterrupted = run_search(space, whole.path);
  space["budget"]["generations"] = 0;
  run_search(space, split.path);
  space["budget"]["generations"] = 1;
  const SearchState resumed = run_search(space, split.path, true);
  REQUIRE(resumed.history.size() == uninterrupted.history.size());
  for (size_t i = 0; i < resumed.history.size(); ++i) {
    CHECK(resumed.history[i].genome == uninterrupted.history[i].genome);
    CHECK(resumed.history[i].objectives == uninterrupted.history[i].objectives);
  }
  CHECK(resumed.population == uninterrupted.population);
  // Another space's state is refused.
  space["optimizer"]["lr"] = {0.001, 0.01, 0.1};
  CHECK_THAT(error_of([&] { run_search(space, split.path, true); }), Catch::Contains("the state of another search"));
  Folder empty;
  CHECK_THAT(error_of([&] { run_search(space, empty.path, true); }), Catch::Contains("search_state.json"));
}

TEST_CASE("A space whose every candidate is invalid is an error, not a silent drop", "[search][run]") {
  Folder f;
  json space = testing::tiny_search_space();
  space["blocks"]["c1"]["filters"] = {0};  // no conv of 0 filters can be built
  space["budget"]["max_resamples"] = 5;
  CHECK_THAT(error_of([&] { run_search(space, f.path); }),
             Catch::Contains("no valid candidate in 5 draws") && Catch::Contains("filters"));
}

TEST_CASE("More candidates at a time than the ranks allow are refused", "[search][run]") {
  Folder f;
  CHECK_THAT(error_of([&] { run_search(testing::tiny_search_space(), f.path, false, 2); }),
             Catch::Contains("--trainers: 2 candidates at a time") &&
                 Catch::Contains("more candidates at once than the ranks allow"));
  json space = testing::tiny_search_space();
  space["budget"]["ranks_per_candidate"] = 2;
  CHECK_THAT(error_of([&] { run_search(space, f.path); }), Catch::Contains("$.budget.ranks_per_candidate"));
}

TEST_CASE("A stop request ends the search unsaved after the round; --resume repeats it", "[search][run]") {
  Folder whole, stopped;
  json space = testing::tiny_search_space();
  const SearchState uninterrupted = run_search(space, whole.path);
  space["budget"]["generations"] = 0;
  run_search(space, stopped.path);
  space["budget"]["generations"] = 1;
  SearchOptions o;
  o.output_dir = stopped.path;
  o.resume = true;
  o.progress = false;
  SearchRun run(SearchSpace(space, "tiny.json"), o, parallel::Communicator::world());
  request_stop(SIGTERM);
  const SearchState at_stop = run.run();
  clear_stop_request();
  CHECK(run.stop_signal() == SIGTERM);
  CHECK(at_stop.generation == 0);
  CHECK(SearchState::read(stopped.path + "/search_state.json").generation == 0);
  const SearchState resumed = run_search(space, stopped.path, true);
  REQUIRE(resumed.history.size() == uninterrupted.history.size());
  for (size_t i = 0; i < resumed.history.size(); ++i)
    CHECK(resumed.history[i].objectives == uninterrupted.history[i].objectives);
}

TEST_CASE("A search of a space with fewer networks than its population trains each once, then stops",
          "[search][run]") {
  json space = testing::tiny_search_space();
  // Two networks: c1's filters, nothing else to choose.
  space["blocks"] = {{"c1", {{"filters", {2, 4}}}}};
  space.erase("optimizer");
  space["budget"]["generations"] = 2;
  Folder dir;
  const SearchState s = run_search(space, dir.path);
  REQUIRE(s.history.size() == 2);
  std::set<std::vector<int64_t>> genomes;
  for (const auto& r : s.history) genomes.insert(r.genome);
  CHECK(genomes.size() == 2);
  CHECK(s.generation == 0);  // generation 1 had nothing new to train
  CHECK(s.population.size() == 2);
}
