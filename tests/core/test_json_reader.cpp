// JSON that users supply outside a config file (--distribution, checkpoint headers) is read
// with the same guards as a config file.
#include <catch2/catch.hpp>

#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/json_reader.hpp"

using namespace tessera;

TEST_CASE("parse_json_text refuses a key given twice, naming the source and path", "[core][json]") {
  CHECK_THROWS_WITH(parse_json_text(R"({"depth": 2, "depth": 4})", "--distribution"),
                    Catch::Contains("--distribution: $.depth") && Catch::Contains("duplicate key"));
  CHECK(parse_json_text(R"({"depth": 2 /* two slabs */})", "--distribution").at("depth") == 2);
}

TEST_CASE("parse_json_text refuses deep nesting and names an overflowing number", "[core][json]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THROWS_WITH(parse_json_text(deep, "checkpoint header"),
                    Catch::Contains("checkpoint header") && Catch::Contains("nested deeper than 64 levels"));
  CHECK_THROWS_WITH(parse_json_text(R"({"step": 1e999})", "checkpoint header"),
                    Catch::Contains("checkpoint header: $.step"));
  CHECK_THROWS_AS(parse_json_text("{\"a\": ", "--distribution"), ConfigError);
}

TEST_CASE("json_excerpt quotes at most a short prefix of a long value", "[core][json]") {
  const std::string text = json_excerpt(nlohmann::json(std::string(1000000, 'x')));
  CHECK(text.size() < 120);
  CHECK_THAT(text, Catch::EndsWith("(1000002 characters)"));
}
