#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "support/text_count.hpp"
#include "tessera/search/front_plot.hpp"

using namespace tessera::search;

using tessera::testing::count_of;

namespace {

CandidateRecord record(const std::string& id, int64_t generation, double loss, double cost, bool failed = false) {
  CandidateRecord r;
  r.id = id;
  r.generation = generation;
  r.objectives = {loss, cost};
  r.failed = failed;
  return r;
}

}  // namespace

TEST_CASE("The front's SVG shows every finished candidate, the front ringed", "[search][plot]") {
  SearchState s;
  s.objectives = {"validation_loss", "parameters"};
  s.history = {record("g0c0", 0, 0.5, 100), record("g0c1", 0, 0.3, 1000), record("g1c0", 1, 0.4, 200),
               record("g1c1", 1, std::numeric_limits<double>::infinity(), 50, true)};
  const std::string svg = front_svg(s, {0, 1, 2}, 1, 0);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count_of(svg, "<title>") == 3);  // the failed candidate is left out
  CHECK(count_of(svg, "r=\"7.0\"") == 3);  // three rings
  CHECK(svg.find("<title>g1c1") == std::string::npos);
  CHECK(svg.find("parameters") != std::string::npos);
  CHECK(svg.find("generation 1") != std::string::npos);
  // Generations get different colours.
  const auto fill = [&](const std::string& id) {
    const size_t title = svg.find("<title>" + id);
    const size_t at = svg.rfind("fill=\"", title);
    return svg.substr(at, 14);
  };
  CHECK(fill("g0c0") == fill("g0c1"));
  CHECK(fill("g0c0") != fill("g1c0"));
  // Nothing finished: a message, not a division by an empty range.
  SearchState empty;
  empty.objectives = s.objectives;
  empty.history = {record("g0c0", 0, 1, 1, true)};
  CHECK(front_svg(empty, {}, 1, 0).find("no candidate finished") != std::string::npos);
}
