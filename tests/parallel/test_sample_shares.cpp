#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/rng.hpp"
#include "tessera/parallel/sample_shares.hpp"

using namespace tessera;

TEST_CASE("Equal shares of a batch that does not divide differ by at most one sample", "[parallel][shares]") {
  const parallel::SampleShares shares(4);
  CHECK(shares.even());
  CHECK(shares.rows(7, 4) == std::vector<int64_t>{2, 2, 1, 2});
  CHECK(shares.rows(6, 4) == std::vector<int64_t>{2, 1, 2, 1});
  CHECK(shares.rows(8, 4) == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(shares.rows(3, 4) == std::vector<int64_t>{1, 1, 0, 1});  // a group left without: the grid refuses it
  CHECK(shares.rows(7, 2) == std::vector<int64_t>{4, 3});
  for (int64_t batch = 1; batch < 200; ++batch)
    for (int groups : {1, 2, 4}) {
      const auto rows = shares.rows(batch, groups);
      CHECK(std::accumulate(rows.begin(), rows.end(), int64_t{0}) == batch);
      const auto [lo, hi] = std::minmax_element(rows.begin(), rows.end());
      CHECK(*hi - *lo <= 1);
    }
}

TEST_CASE("Weighted shares follow the weights and nest across sample counts", "[parallel][shares]") {
  parallel::SampleShares shares(2);
  shares.set_weights({2, 1}, "balance");
  CHECK_FALSE(shares.even());
  CHECK(shares.version() == 1);
  CHECK(shares.rows(12, 2) == std::vector<int64_t>{8, 4});
  CHECK(shares.rows(13, 2) == std::vector<int64_t>{9, 4});  // 8.67 rounds up
  // Random weights over 12 ranks: every grid's group boundaries are among those of any grid
  // with more groups, so a coarse block is a union of fine blocks of the same ranks.
  parallel::SampleShares twelve(12);
  std::vector<int64_t> w;
  for (uint64_t r = 0; r < 12; ++r) w.push_back(1 + static_cast<int64_t>(rng::bits(5, 9, r) % 1000));
  twelve.set_weights(w, "balance");
  for (int64_t batch : {12, 13, 50, 97}) {
    for (int coarse : {1, 2, 3, 4, 6})
      for (int fine : {2, 4, 6, 12}) {
        if (fine % coarse != 0) continue;
        const auto c = twelve.rows(batch, coarse), f = twelve.rows(batch, fine);
        for (int g = 0; g < coarse; ++g) {
          int64_t sum = 0;
          for (int k = 0; k < fine / coarse; ++k) sum += f[static_cast<size_t>(g * (fine / coarse) + k)];
          CHECK(sum == c[static_cast<size_t>(g)]);
        }
      }
  }
}

TEST_CASE("Shares refuse weights that are not one positive number per rank", "[parallel][shares]") {
  parallel::SampleShares shares(2);
  CHECK_THROWS_WITH(shares.set_weights({1, 0}, "$.training.balance"),
                    Catch::Contains("$.training.balance") && Catch::Contains("rank 1 is 0"));
  CHECK_THROWS_WITH(shares.set_weights({1, 2, 3}, "$.training.balance"), Catch::Contains("3 weights for 2 ranks"));
  CHECK_THROWS_WITH(shares.rows(4, 3), Catch::Contains("3 sample groups do not divide 2 ranks"));
  CHECK(shares.version() == 0);
}

TEST_CASE("Weights of measured speeds are in proportion and at least one", "[parallel][shares]") {
  const auto w = parallel::weights_of_speeds({100.0, 50.0});
  REQUIRE(w.size() == 2);
  CHECK(w[0] == 666667);
  CHECK(w[1] == 333333);
  CHECK(parallel::weights_of_speeds({1e9, 1e-9})[1] == 1);
  CHECK_THROWS_WITH(parallel::weights_of_speeds({1.0, 0.0}), Catch::Contains("positive and finite"));
}
