#include <catch2/catch.hpp>

#include <string>

#include "support/text_count.hpp"
#include "tessera/report/run_report.hpp"

using namespace tessera::report;

using tessera::testing::count_of;

namespace {

RunLog run(const std::string& label, double final_loss) {
  RunLog r;
  r.path = "runs/" + label + ".jsonl";
  r.label = label;
  r.start = {{"event", "start"},
             {"precision", "bf16"},
             {"batch_size", 16},
             {"ranks", 2},
             {"dataset", "synthetic <fields>"},
             {"layers",
              {{{"name", "conv1"}, {"type", "conv3d"}, {"output_per_sample", {8, 8, 8, 16}}, {"parameters", 448},
                {"backend", "onednn"}, {"precision", "bf16"}, {"distribution", "{depth: 2}"}},
               {{"name", "out"}, {"type", "dense"}, {"output_per_sample", {4}}, {"parameters", 20},
                {"backend", "onednn"}, {"precision", "fp32"}}}},
             {"placement", {{{"rank", 0}, {"node", 0}, {"host", "n1"}, {"cpus", "0"}, {"numa", "0"}}}}};
  for (int s = 1; s <= 4; ++s)
    r.train.push_back({16 * s, s / 2, 1.0 / s, 1e-3, 100.0 + s, 0.5 * s, -1});
  r.validation.push_back({32, 1, 0.6, {{"baseline_loss", 0.3}, {"iou", 0.5}}, false});
  r.validation.push_back({64, 3, final_loss, {{"baseline_loss", 0.3}, {"iou", 0.7}}, false});
  r.end = {{"event", "end"}, {"steps", 64}, {"samples_per_s", 101.5}, {"peak_rss_mb_max_rank", 200.0},
           {"elapsed_s", 2.0}, {"ranks", 2}};
  return r;
}

}  // namespace

TEST_CASE("A run report overlays its runs and has every section they have data for", "[report]") {
  RunLog a = run("fp32 <a>", 0.1), b = run("bf16", 0.45);
  a.profile = {{"regions",
                {{"step", {{"calls", 10}, {"seconds", 1.0}}},
                 {"forward/conv1", {{"calls", 10}, {"seconds", 0.2}}},
                 {"backward/conv1", {{"calls", 10}, {"seconds", 0.4}}},
                 {"forward/out", {{"calls", 10}, {"seconds", 0.01}}},
                 {"data", {{"calls", 10}, {"seconds", 0.05}}}}}};
  const std::string page = run_report_html({a, b}, "Report & co");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<title>Report &amp; co</title>") != std::string::npos);
  for (const char* id : {"runs", "loss", "metrics", "speed", "profile", "layout", "placement", "setup"})
    CHECK(page.find(std::string("<section id=\"") + id + "\">") != std::string::npos);
  CHECK(page.find("<section id=\"population\">") == std::string::npos);
  // Self-contained: no script, nothing fetched.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=") == std::string::npos);
  // Plots: loss by step and time, IoU, throughput, learning rate.
  CHECK(count_of(page, "<svg") == 5);
  CHECK(page.find("Validation iou against step") != std::string::npos);
  CHECK(page.find("data-name=\"fp32 &lt;a&gt;\"") != std::string::npos);
  CHECK(page.find("data-name=\"bf16 validation\"") != std::string::npos);
  // The validation loss against predicting the mean, below and above it.
  CHECK(page.find("0.1 (3.0&times; below predicting the mean)") != std::string::npos);
  CHECK(page.find("0.45 (1.5&times; above predicting the mean)") != std::string::npos);
  // Profile: the slowest layer first, its share of the step; regions outside layers after.
  const size_t conv1 = page.find("<td>conv1</td><td class=\"num\">20</td><td class=\"num\">40</td>");
  CHECK(conv1 != std::string::npos);
  CHECK(page.find("60.0%") != std::string::npos);
  CHECK(conv1 < page.find("<td>out</td>", page.find("<section id=\"profile\">")));
  CHECK(page.find("<td>data</td>") != std::string::npos);
  // The two runs' layouts are the same: shown once, then named.
  CHECK(page.find("{depth: 2}") != std::string::npos);
  CHECK(page.find("not split") != std::string::npos);
  CHECK(page.find("The same as fp32 &lt;a&gt;.") != std::string::npos);
  CHECK(page.find("synthetic &lt;fields&gt;") != std::string::npos);
}

TEST_CASE("A report shows a population's tournaments and says when there is no best trainer", "[report]") {
  RunLog r = run("pop", 0.2);
  r.tournaments.push_back({{"event", "tournament"},
                           {"round", 1},
                           {"step", 32},
                           {"selection", "pairwise"},
                           {"metrics", {0.5, 0.25}},
                           {"pairs", {{{"trainers", {1, 0}}, {"scores", {0.25, 0.5}}, {"winner", 1}}}},
                           {"seconds", 0.01}});
  r.population = {{"event", "population"}, {"best_trainer", nullptr}, {"validation_loss", {nullptr, nullptr}}};
  const std::string page = run_report_html({r}, "t");
  CHECK(page.find("<section id=\"population\">") != std::string::npos);
  CHECK(page.find("1 vs 0: 1 won") != std::string::npos);
  CHECK(page.find("none, none; best trainer: none (no validation figure to compare)") != std::string::npos);
}

TEST_CASE("A run without validation or an end record still reports what it has", "[report]") {
  RunLog r = run("killed", 0.2);
  r.validation.clear();
  r.end = nullptr;
  const std::string page = run_report_html({r}, "t");
  CHECK(page.find("no end record (still running, or killed)") != std::string::npos);
  CHECK(page.find("<section id=\"metrics\">") == std::string::npos);
  CHECK(count_of(page, "<svg") == 4);
}
