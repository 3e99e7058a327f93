#include <catch2/catch.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include "tessera/train/replica_check.hpp"

using namespace tessera;

namespace {

uint64_t fingerprint_of(const std::vector<float>& values) {
  Tensor t(Shape{static_cast<int64_t>(values.size())});
  t.copy_from_host(values);
  return train::fingerprint(t);
}

}  // namespace

TEST_CASE("A tensor's fingerprint follows its bits and their positions", "[train][replicas]") {
  std::vector<float> values(10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.001f * static_cast<float>(i) - 3.0f;
  const uint64_t base = fingerprint_of(values);
  CHECK(fingerprint_of(values) == base);

  auto changed = values;
  changed[7777] = std::nextafter(changed[7777], 10.0f);  // one ulp
  CHECK(fingerprint_of(changed) != base);

  auto swapped = values;
  std::swap(swapped[1], swapped[2]);
  CHECK(fingerprint_of(swapped) != base);

  // Equal as floats, different bits.
  CHECK(fingerprint_of({0.0f, 1.0f}) != fingerprint_of({-0.0f, 1.0f}));
}

TEST_CASE("Checking replicas of a group of one passes", "[train][replicas]") {
  model::ParameterStore store;
  store.declare("w", Shape{4}, layers::Init::he_normal, 4, 4);
  store.finalize(1);
  CHECK_NOTHROW(train::check_replicas(parallel::Communicator::self(), store, 1));
}
