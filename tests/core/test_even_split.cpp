#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "tessera/core/even_split.hpp"

using namespace tessera;

namespace {

std::vector<int64_t> parts_of(int64_t total, int64_t parts) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < parts; ++i) out.push_back(even_part(total, parts, i));
  return out;
}

}  // namespace

TEST_CASE("Near-equal parts round the cumulative share, halves up", "[core][split]") {
  CHECK(parts_of(7, 4) == std::vector<int64_t>{2, 2, 1, 2});  // 1.75, 3.5, 5.25 round to 2, 4, 5
  CHECK(parts_of(5, 3) == std::vector<int64_t>{2, 1, 2});
  CHECK(parts_of(8, 4) == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(parts_of(3, 3) == std::vector<int64_t>{1, 1, 1});
  CHECK(even_boundary(13, 2, 0) == 0);
  CHECK(even_boundary(13, 2, 2) == 13);
}

TEST_CASE("Near-equal parts tile the total, differ by at most one and leave none empty", "[core][split]") {
  for (int64_t parts = 1; parts <= 9; ++parts)
    for (int64_t total = parts; total <= 40; ++total) {
      const auto p = parts_of(total, parts);
      int64_t sum = 0;
      for (const int64_t n : p) sum += n;
      const auto [fewest, most] = std::minmax_element(p.begin(), p.end());
      INFO(total << " over " << parts);
      CHECK(sum == total);
      CHECK(*most - *fewest <= 1);
      CHECK(*fewest >= 1);
    }
}
