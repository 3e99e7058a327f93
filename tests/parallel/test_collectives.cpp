#include <catch2/catch.hpp>

#include <vector>

#include "tessera/parallel/channel_exchange.hpp"
#include "tessera/parallel/mpi_collectives.hpp"

using namespace tessera;

TEST_CASE("MpiCollectives over one rank: gathers and scatters copy, sums leave the data", "[parallel]") {
  parallel::MpiCollectives one(parallel::Communicator::world(), 2);
  REQUIRE(one.size() == 1);
  const std::vector<float> send{1, 2, 3};
  std::vector<float> receive(3, 0.0f);
  one.allgather(send.data(), receive.data(), 3);
  CHECK(receive == send);
  std::vector<float> slice(3, 0.0f);
  one.reduce_scatter_sum(send.data(), slice.data(), 3);
  CHECK(slice == send);
  Tensor t(Shape{2});
  t.copy_from_host({4, 5});
  one.allreduce_sum(t);
  CHECK(t.to_host() == std::vector<float>{4, 5});
  // Slots nothing was started in are done, and waiting for them returns at once.
  CHECK(one.test(0));
  CHECK(one.test(1));
  one.wait_all();
  CHECK_THROWS_AS(one.test(2), std::out_of_range);
}

TEST_CASE("ChannelExchange over a group of one copies the block both ways", "[parallel]") {
  parallel::ChannelExchange exchange(parallel::ProcessGrid(), Shape{2, 3, 4}, "conv");
  REQUIRE(exchange.slice_shape() == Shape{2, 3, 4});
  Tensor slice(Shape{2, 3, 4}), whole(Shape{2, 3, 4});
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 5.0f;
  slice.copy_from_host(values);
  exchange.gather(slice, whole);
  CHECK(whole.to_host() == values);
  whole.fill(2.0f);
  exchange.reduce_scatter(whole, slice);
  CHECK(slice.to_host() == std::vector<float>(24, 2.0f));
}
