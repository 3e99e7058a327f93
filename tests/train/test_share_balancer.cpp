#include <catch2/catch.hpp>

#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/train/share_balancer.hpp"

using namespace tessera;
using train::BalanceOptions;
using train::rows_for_speeds;

TEST_CASE("Balanced rows follow the speeds and add up to the batch", "[train][balance]") {
  CHECK(rows_for_speeds({2.0, 1.0}, {0, 0}, 12) == std::vector<int64_t>{8, 4});
  CHECK(rows_for_speeds({1.0, 1.0, 1.0}, {0, 0, 0}, 7) == std::vector<int64_t>{3, 2, 2});
  CHECK(rows_for_speeds({100.0, 1.0}, {0, 0}, 8) == std::vector<int64_t>{7, 1});  // never below one
  const auto rows = rows_for_speeds({3.1, 2.2, 0.7, 1.9}, {0, 0, 0, 0}, 31);
  CHECK(std::accumulate(rows.begin(), rows.end(), int64_t{0}) == 31);
  CHECK(rows == std::vector<int64_t>{13, 9, 2, 7});  // the slowest finishes at 4.19 (largest remainders: 4.29)
}

TEST_CASE("A group's memory caps its rows and the rest goes to the others in proportion", "[train][balance]") {
  // Speeds 4:1:1 would give 8/2/2; group 0 holds 5, the other two share 7 as 4 and 3.
  CHECK(rows_for_speeds({4.0, 1.0, 1.0}, {5, 0, 0}, 12) == std::vector<int64_t>{5, 4, 3});
  CHECK(rows_for_speeds({1.0, 1.0}, {3, 20}, 12) == std::vector<int64_t>{3, 9});
  CHECK_THROWS_WITH(rows_for_speeds({1.0, 1.0}, {3, 4}, 12),
                    Catch::Contains("memory holds 7 samples, fewer than the batch of 12"));
  CHECK_THROWS_WITH(rows_for_speeds({1.0, 1.0, 1.0}, {0, 0, 0}, 2), Catch::Contains("at least as many samples"));
  CHECK_THROWS_WITH(rows_for_speeds({1.0, 0.0}, {0, 0}, 4), Catch::Contains("speed must be positive"));
}

TEST_CASE("What a rank measured holding its rows caps them, leaving a tenth of its memory", "[train][balance]") {
  constexpr double MiB = 1024.0 * 1024.0;
  // 106 MiB before the first step, 406 MiB at 192 rows a step: 1.5625 MiB a row; 500 MiB hold
  // (450 - 106) / 1.5625 = 220 rows.
  CHECK(train::rows_memory_measured(106 * MiB, 406 * MiB, 192, static_cast<int64_t>(500 * MiB)) == 220);
  // Nothing grew yet, or no limit known: no cap from the measurement.
  CHECK(train::rows_memory_measured(106 * MiB, 106 * MiB, 192, static_cast<int64_t>(500 * MiB)) == 0);
  CHECK(train::rows_memory_measured(106 * MiB, 406 * MiB, 192, 0) == 0);
  // A rank whose fixed part already fills its memory still keeps one row.
  CHECK(train::rows_memory_measured(480 * MiB, 490 * MiB, 4, static_cast<int64_t>(500 * MiB)) == 1);
}

TEST_CASE("The balance key and flag take even, measured or weights", "[train][balance]") {
  CHECK(BalanceOptions::parse("even", "$.training.balance").kind == BalanceOptions::Kind::even);
  CHECK(BalanceOptions::parse("measured", "$.training.balance").kind == BalanceOptions::Kind::measured);
  const auto weights = BalanceOptions::parse(nlohmann::json::array({2, 1.0}), "$.training.balance");
  CHECK(weights.kind == BalanceOptions::Kind::weights);
  CHECK(weights.integer_weights() == std::vector<int64_t>{666667, 333333});
  CHECK(BalanceOptions::from_flag("3,1").weights == std::vector<double>{3.0, 1.0});
  CHECK(BalanceOptions::from_flag("measured").key == "--balance");
  CHECK_THROWS_WITH(BalanceOptions::parse("fast", "$.training.balance"),
                    Catch::Contains("$.training.balance") && Catch::Contains("expected \"even\", \"measured\""));
  CHECK_THROWS_WITH(BalanceOptions::parse(nlohmann::json::array({1, -2}), "$.training.balance"),
                    Catch::Contains("$.training.balance[1]: expected a finite number in [1e-06, 1e+06], got -2"));
  CHECK_THROWS_WITH(BalanceOptions::from_flag("2,x"), Catch::Contains("--balance") && Catch::Contains("'x'"));
  // NaN and infinities are not weights, whatever a comparison with them says.
  for (const char* bad : {"inf,1", "nan,1", "1,-inf", "1e999,1", "0,1"})
    CHECK_THROWS_WITH(BalanceOptions::from_flag(bad), Catch::StartsWith("--balance: expected even, measured") &&
                                                         Catch::Contains("expected a finite number in"));
}
