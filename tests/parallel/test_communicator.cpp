#include <catch2/catch.hpp>

#include "tessera/parallel/communicator.hpp"

using namespace tessera;

TEST_CASE("Without MPI initialised the world is one rank and collectives are no-ops", "[parallel]") {
  const auto world = parallel::Communicator::world();
  CHECK(world.rank() == 0);
  CHECK(world.size() == 1);
  Tensor t(Shape{3});
  t.copy_from_host({1, 2, 3});
  world.allreduce_sum(t);
  CHECK(t.to_host() == std::vector<float>{1, 2, 3});
  double d = 2.5;
  world.allreduce_sum(&d, 1);
  CHECK(d == 2.5);
}
