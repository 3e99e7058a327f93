#include <catch2/catch.hpp>

#include "tessera/core/config.hpp"

using namespace tessera;
using nlohmann::json;

TEST_CASE("ConfigObject reads typed values with defaults", "[core][config]") {
  const json j = json::parse(R"({"a": 3, "b": 2.5, "c": "x", "d": true, "e": [1, 2, 3], "k": 3})");
  ConfigObject c(j, "$.layer");
  CHECK(c.integer("a") == 3);
  CHECK(c.number("b") == 2.5);
  CHECK(c.number("a") == 3.0);
  CHECK(c.string("c") == "x");
  CHECK(c.boolean("d", false));
  CHECK(c.integer_list("e") == std::vector<int64_t>{1, 2, 3});
  CHECK(c.spatial("k", 2, 1, 1, 1) == std::array<int64_t, 3>{1, 3, 3});
  CHECK(c.integer("missing", 7) == 7);
  CHECK_NOTHROW(c.finish());
}

TEST_CASE("ConfigObject errors name the JSON path and the problem", "[core][config]") {
  const json j = json::parse(R"({"a": "3", "b": -1, "kernel": [3, 3], "typo": 1, "s": "max"})");
  ConfigObject c(j, "$.model.layers[2]");
  CHECK_THROWS_WITH(c.integer("a"), Catch::Contains("$.model.layers[2].a") && Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(c.integer_in("b", 0, 5, 1), Catch::Contains("$.model.layers[2].b") && Catch::Contains("outside"));
  CHECK_THROWS_WITH(c.spatial("kernel", 3, 3, 1, 1), Catch::Contains("list of 3"));
  CHECK_THROWS_WITH(c.choice("s", {"min", "mean"}, "min"), Catch::Contains("not one of: min, mean"));
  CHECK_THROWS_WITH(c.string("nope"), Catch::Contains("$.model.layers[2].nope") && Catch::Contains("missing"));
  CHECK_THROWS_WITH(c.finish(), Catch::Contains("$.model.layers[2].typo") && Catch::Contains("unknown key"));
  CHECK_THROWS_AS(ConfigObject(json::array(), "$.x"), ConfigError);
}

TEST_CASE("read_json_file reports the file for missing and malformed files", "[core][config]") {
  CHECK_THROWS_WITH(read_json_file("/nonexistent/run.json"), Catch::Contains("/nonexistent/run.json"));
  const std::string path = "tessera_test_bad.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("{\"model\": [1, 2,}", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(read_json_file(path), Catch::Contains(path) && Catch::Contains("invalid JSON"));
  std::remove(path.c_str());
}
