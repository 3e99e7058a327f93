#include <catch2/catch.hpp>

#include <vector>

#include "tessera/io/sample_store.hpp"

using namespace tessera;

TEST_CASE("The sample store keeps one box per sample within its budget", "[io][store]") {
  io::SampleStore store(3 * 10);
  const parallel::Box box{{0, 0, 0}, {2, 2, 2}};
  store.reset_for(box, 8, 2);
  const std::vector<unsigned char> in(8, 7), target{1, 2};
  CHECK(store.find(4) == nullptr);
  CHECK(store.insert(4, in.data(), target.data()));
  CHECK(store.insert(9, in.data(), target.data()));
  CHECK(store.insert(1, in.data(), target.data()));
  CHECK_FALSE(store.insert(2, in.data(), target.data()));  // over budget: kept out
  CHECK(store.samples() == 3);
  CHECK(store.bytes() == 30);
  const unsigned char* s = store.find(9);
  REQUIRE(s != nullptr);
  CHECK(std::vector<unsigned char>(s, s + 10) == std::vector<unsigned char>{7, 7, 7, 7, 7, 7, 7, 7, 1, 2});
  store.reset_for(box, 8, 2);  // same box: kept
  CHECK(store.samples() == 3);
  store.reset_for(parallel::Box{{0, 0, 1}, {2, 2, 1}}, 4, 2);  // another box: emptied
  CHECK(store.samples() == 0);
  CHECK(store.find(9) == nullptr);
}
