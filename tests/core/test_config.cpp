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
  CHECK_THROWS_WITH(c.integer_in("b", 0, 5, 1), Catch::Contains("$.model.layers[2].b: expected an integer from 0 to 5, got -1"));
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

namespace {
/// Writes `text` to `path` and reads it back as a config.
json read_text_as_config(const std::string& path, const std::string& text) {
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  return read_json_file(path);
}
}  // namespace

TEST_CASE("read_json_file refuses a key given twice in one object, naming file and path", "[core][config]") {
  const std::string path = "tessera_test_duplicate.json";
  CHECK_THROWS_WITH(
      read_text_as_config(path, R"({"model": {"layers": [{"type": "relu"}, {"kernel": 3, "kernel": 5}]}})"),
      Catch::Contains(path + ": $.model.layers[1].kernel: duplicate key"));
  // The same key in different objects is fine.
  const json ok = read_text_as_config(path, R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})");
  CHECK(ok["c"][1]["k"] == 4);
}

TEST_CASE("read_json_file refuses nesting deeper than any config needs, without exhausting the stack",
          "[core][config]") {
  const std::string path = "tessera_test_deep.json";
  const int depth = 200000;
  std::string deep = "{\"a\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
  CHECK_THROWS_WITH(read_text_as_config(path, deep),
                    Catch::Contains(path + ": $.a[0][0]") && Catch::Contains("nested deeper than 64 levels"));
  std::string nested = "1";
  for (int i = 0; i < 63; ++i) nested = "[" + nested + "]";
  CHECK_NOTHROW(read_text_as_config(path, nested));  // 63 arrays: within the limit
}

TEST_CASE("Config errors quote a long value as a short excerpt", "[core][config]") {
  const json j = {{"name", json::array({std::string(1 << 20, 'x')})}, {"mode", std::string(1 << 20, 'y')}};
  ConfigObject cfg(j, "$");
  try {
    cfg.string("name");
    FAIL("a list is not a string");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).size() < 300);
    CHECK_THAT(e.what(), Catch::Contains("(1048580 characters)"));
  }
  try {
    cfg.choice("mode", {"a", "b"}, "a");
    FAIL("not a choice");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).size() < 300);
    CHECK_THAT(e.what(), Catch::Contains("is not one of: a, b"));
  }
}

TEST_CASE("read_json_file names the file and key of a number too large for a double", "[core][config]") {
  const std::string path = "tessera_test_overflow.json";
  CHECK_THROWS_WITH(read_text_as_config(path, R"({"training": {"seed": 1, "epochs": 1e999}})"),
                    Catch::Contains(path + ": $.training.epochs") && Catch::Contains("number overflow"));
}
