#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tessera/core/checked_number.hpp"
#include "tessera/core/config.hpp"
#include "tessera/core/config_key_recorder.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;

TEST_CASE("read_integer takes whole decimal integers within bounds, and says why not", "[core][numbers]") {
  const IntegerBounds batch{1, 1 << 30};
  int64_t v = -7;
  CHECK(read_integer("12", batch, v).empty());
  CHECK(v == 12);
  CHECK(read_integer("+3", batch, v).empty());
  CHECK(v == 3);
  // Every value a user mistypes or pushes past 64 bits is refused, and v is left alone.
  for (const char* bad :
       {"0", "-1", "1073741825", "9223372036854775807", "99999999999999999999", "123456789012345678901234567890", "",
        "-", "1.5", "1e3", "12abc", " 12", "nan", "inf", "0x10"}) {
    v = -7;
    const std::string problem = read_integer(bad, batch, v);
    INFO(bad);
    CHECK_THAT(problem, Catch::StartsWith("expected an integer from 1 to 1073741824, got "));
    CHECK(v == -7);
  }
  CHECK(read_integer("4611686018427387904", {0, int64_t{1} << 62}, v).empty());
  CHECK_THAT(read_integer("-9223372036854775809", {}, v), Catch::Contains("expected an integer, got '-922"));
  // A megabyte of digits is quoted as an excerpt.
  const std::string long_text(1 << 20, '9');
  CHECK(read_integer(long_text, batch, v).size() < 200);
}

TEST_CASE("read_real refuses NaN, infinities and what overflows a double, whatever the bounds", "[core][numbers]") {
  RealBounds unit;
  unit.min = 0;
  unit.max = 1;
  double v = -7;
  CHECK(read_real("0.25", unit, v).empty());
  CHECK(v == 0.25);
  CHECK(read_real("1e-1", unit, v).empty());
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999", "-1e999", "1.5", "-0.5", "", ".",
                          "e", "0x1p-2", " 0.5", "0.5x"}) {
    v = -7;
    INFO(bad);
    CHECK_THAT(read_real(bad, unit, v), Catch::StartsWith("expected a finite number in [0, 1], got "));
    CHECK(v == -7);
  }
  // Unbounded still means finite.
  CHECK_THAT(read_real("1e400", RealBounds{}, v), Catch::Equals("expected a finite number, got '1e400'"));
  RealBounds positive;
  positive.min = 0;
  positive.min_open = true;
  CHECK(positive.text() == "a finite number above 0");
  CHECK_THAT(read_real("0", positive, v), Catch::Equals("expected a finite number above 0, got 0"));
}

TEST_CASE("value checks are false for NaN, and the throwing forms name the source", "[core][numbers]") {
  RealBounds any;
  CHECK_FALSE(any.contains(std::nan("")));
  CHECK_FALSE(any.contains(std::numeric_limits<double>::infinity()));
  CHECK(real_problem(std::nan(""), any) == "expected a finite number, got nan");
  CHECK_THROWS_WITH(check_real(std::nan(""), any, "--threshold"), "--threshold: expected a finite number, got nan");
  CHECK_THROWS_WITH(check_integer(-3, {0, 10}, "--channel"), "--channel: expected an integer from 0 to 10, got -3");
  CHECK_THROWS_WITH(checked_integer("x", {0, 10}, "$.a"), "$.a: expected an integer from 0 to 10, got 'x'");
  CHECK(checked_real("2.5", any, "$.b") == 2.5);
}

TEST_CASE("checked_product refuses a derived quantity that does not fit, naming its source", "[core][numbers]") {
  CHECK(checked_product(1 << 30, 1 << 20, "--accumulate", "a step") == int64_t{1} << 50);
  const int64_t big = int64_t{1} << 62;
  CHECK_THROWS_WITH(checked_product(8, big, "--accumulate", "a step of samples"),
                    Catch::StartsWith("--accumulate: a step of samples of 8 x 4611686018427387904 is more than"));
  CHECK_THROWS_WITH(checked_product(3, 5, "--epochs", "steps", 14), Catch::Contains("is more than 14"));
  CHECK(checked_product(0, big, "x", "y") == 0);
}

TEST_CASE("ConfigObject refuses integers past 64 bits and records the numeric keys it reads", "[core][numbers]") {
  const auto j = nlohmann::json::parse(R"({"a": 18446744073709551615, "b": [1, 9223372036854775808], "c": 3,
                                           "d": 0.5, "e": 4})");
  ConfigKeyRecorder recorder;
  ConfigObject c(j, "$.x");
  CHECK_THROWS_WITH(c.integer("a"), "$.x.a: expected a 64-bit integer, got 18446744073709551615");
  CHECK_THROWS_WITH(c.integer_list("b"), "$.x.b[1]: expected a 64-bit integer, got 9223372036854775808");
  CHECK(c.integer_in("c", 1, 8) == 3);
  CHECK(c.number_in("d", 0, 1, 0) == 0.5);
  CHECK(c.integer("e") == 4);
  CHECK(c.integer_in("absent", 0, 1, 0) == 0);
  const auto& reads = recorder.reads();
  REQUIRE(reads.size() == 4);
  CHECK(reads[0].path == "$.x.b[0]");
  CHECK((reads[1].path == "$.x.c" && reads[1].integer && reads[1].bounded && reads[1].integer_bounds.max == 8));
  CHECK((reads[2].path == "$.x.d" && !reads[2].integer && reads[2].bounded && reads[2].real_bounds.max == 1));
  CHECK((reads[3].path == "$.x.e" && !reads[3].bounded));
}
