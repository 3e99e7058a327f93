#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "support/scratch_folder.hpp"
#include "tessera/core/error.hpp"
#include "tessera/report/run_log.hpp"

using namespace tessera::report;

namespace {

/// A folder of its own under the system's temporary folder, removed at the end.
struct Folder {
  tessera::testing::ScratchFolder scratch{"tessera_run_log"};
  const std::string& path = scratch.path();
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
};

const char* const kLog =
    R"({"event":"start","batch_size":16,"precision":"fp32","layers":[{"name":"conv1"}]}
{"event":"train","step":16,"epoch":0,"loss":0.5,"lr":0.001,"samples_per_s":100.0,"elapsed_s":2.0}
{"event":"train","step":32,"epoch":0,"loss":0.25,"lr":0.002,"samples_per_s":120.0,"elapsed_s":4.0,"loss_scale":1024}

{"event":"validation","step":32,"epoch":0,"loss":0.2,"baseline_loss":0.4,"mae":0.3,"baseline_mae":0.5}
{"event":"validation","step":32,"epoch":0,"loss":0.19,"after_tournament":true}
{"event":"tournament","round":1,"step":32}
{"event":"checkpoint","step":32}
{"event":"end","steps":32,"samples_per_s":110.0}
)";

}  // namespace

TEST_CASE("A metrics log reads back into its records", "[report]") {
  const Folder folder;
  const RunLog log = RunLog::read(folder.write("run.metrics.jsonl", kLog));
  CHECK(log.label == "run.metrics");
  CHECK(log.start["batch_size"] == 16);
  REQUIRE(log.train.size() == 2);
  CHECK(log.train[1].step == 32);
  CHECK(log.train[1].loss == 0.25);
  CHECK(log.train[1].elapsed_s == 4.0);
  CHECK(log.train[0].loss_scale == -1);
  CHECK(log.train[1].loss_scale == 1024);
  REQUIRE(log.validation.size() == 2);
  CHECK(log.validation[0].metrics.at("mae") == 0.3);
  CHECK(log.validation[0].metrics.at("baseline_loss") == 0.4);
  CHECK(log.validation[0].metrics.count("step") == 0);
  CHECK_FALSE(log.validation[0].after_tournament);
  CHECK(log.validation[1].after_tournament);
  CHECK(log.tournaments.size() == 1);
  REQUIRE(log.other.size() == 1);  // a kind this reader does not know is kept
  CHECK(log.other[0]["event"] == "checkpoint");
  CHECK(log.end["steps"] == 32);
  CHECK(log.plan.is_null());
  // Time at a step: interpolated between windows, extrapolated from 0 before the first.
  CHECK(log.elapsed_at(24) == Approx(3.0));
  CHECK(log.elapsed_at(8) == Approx(1.0));
  CHECK(log.elapsed_at(100) == Approx(4.0));
}

TEST_CASE("A log that is not a metrics log is refused naming the file and line", "[report]") {
  const Folder folder;
  CHECK_THROWS_AS(RunLog::read(folder.path + "/missing.jsonl"), tessera::IoError);
  const auto message = [](const std::string& path) {
    try {
      RunLog::read(path);
    } catch (const tessera::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string config = folder.write("config.json", "{\n  \"model\": {}\n}\n");
  CHECK_THAT(message(config), Catch::Contains("config.json:1: not a record of a Tessera metrics log"));
  const std::string no_event = folder.write("no_event.jsonl", "{\"event\":\"start\"}\n{\"step\":1}\n{\"event\":\"end\"}\n");
  CHECK_THAT(message(no_event), Catch::Contains("no_event.jsonl:2:"));
  const std::string empty = folder.write("empty.jsonl", "\n\n");
  CHECK_THAT(message(empty), Catch::Contains("holds no record"));
  // A field the report reads, of the wrong type, is refused at its line by the reader, not
  // later by the JSON library with no file named.
  for (const auto& [record, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"event":"train","step":"8","loss":0.5})", R"(the "train" record's "step" should be an integer, got "8")"},
           {R"({"event":"train","step":8,"loss":"x"})", R"(the "train" record's "loss" should be a number, got "x")"},
           {R"({"event":"validation","step":1e300,"loss":1})", R"("step" should be an integer, got 1e+300)"},
           {R"({"event":"end","elapsed_s":[1]})", R"(the "end" record's "elapsed_s" should be a number, got [1])"},
           {R"({"event":"profile","regions":{"step":3}})", R"("regions"."step" should be an object, got 3)"},
           {R"({"event":"profile","regions":{"step":{"calls":"2"}}})", R"("regions"."step"."calls" should be)"},
           {R"({"event":"start","layers":[1]})", R"("layers" should be an array of objects, got [1])"},
           {R"({"event":"tournament","metrics":["a"]})", R"("metrics" should be an array of numbers (or null))"},
           {R"({"event":"tournament","pairs":[{"trainers":3}]})", R"(pair's "trainers" should be an array, got 3)"},
           {R"({"event":"population","validation_loss":{}})", R"("validation_loss" should be an array of numbers)"}}) {
    const std::string bad = folder.write("typed.jsonl", std::string(kLog) + record + "\n");
    INFO(record);
    CHECK_THAT(message(bad), Catch::Contains("typed.jsonl:") && Catch::Contains(expected));
  }
  // A run killed mid-write leaves its last line cut short: the records before it still read.
  const RunLog cut = RunLog::read(folder.write("cut.jsonl", std::string(kLog) + "{\"event\":\"tra"));
  CHECK(cut.train.size() == 2);
}

TEST_CASE("A population's other trainers' logs are found beside the first", "[report]") {
  const Folder folder;
  const std::string first = folder.write("pop.jsonl", kLog);
  CHECK(population_logs(first).empty());
  folder.write("pop.trainer1.jsonl", kLog);
  folder.write("pop.trainer2.jsonl", kLog);
  folder.write("pop.trainer4.jsonl", kLog);  // after a gap: not of this population
  const auto logs = population_logs(first);
  REQUIRE(logs.size() == 2);
  CHECK(logs[1] == folder.path + "/pop.trainer2.jsonl");
}
