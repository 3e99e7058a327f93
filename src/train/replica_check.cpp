#include "tessera/train/replica_check.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "tessera/core/format.hpp"
#include "tessera/core/rng.hpp"

namespace tessera::train {

uint64_t fingerprint(const Tensor& t) {
  const auto v = t.view();
  uint64_t sum = 0;
  // (index << 32) ^ bits is distinct for every (index, bits) with index < 2³², and mix is a
  // bijection, so one changed element changes exactly one term. Integer addition is exact
  // and associative: the reduction order does not matter.
  Kokkos::parallel_reduce(
      "tessera::replica_fingerprint", RangePolicy(0, t.numel()),
      KOKKOS_LAMBDA(const int64_t i, uint64_t& acc) {
        // The bits, not the value: equal floats with other bits (0 and -0, NaNs) differ.
        const float value = v(i);
        uint32_t bits = 0;
        memcpy(&bits, &value, sizeof bits);
        acc += rng::mix((static_cast<uint64_t>(i) << 32) ^ static_cast<uint64_t>(bits));
      },
      sum);
  return sum;
}

bool check_replicas_by_default() {
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

void check_replicas(const parallel::Communicator& group, const model::ParameterStore& parameters, int64_t step) {
  if (group.is_serial()) return;
  std::vector<const layers::Parameter*> trainable;
  std::vector<uint64_t> lowest, highest;
  // Synchronized buffers are kept equal by their layers' own collectives: held to it too.
  for (const auto& p : parameters.all())
    if (p->trainable || p->synchronized) {
      trainable.push_back(p.get());
      lowest.push_back(fingerprint(p->value));
    }
  const std::vector<uint64_t> mine = lowest;
  highest = lowest;
  // A shard of a channel-split layer is compared only among the ranks that hold it.
  const auto reduce = [](uint64_t* values, int count, MPI_Op op, const parallel::Communicator& over) {
    if (over.is_serial()) return;
    parallel::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_UINT64_T, op, over.handle()),
                        "MPI_Allreduce (replica check)");
  };
  if (!parameters.has_shards()) {
    const int count = static_cast<int>(lowest.size());
    reduce(lowest.data(), count, MPI_MIN, group);
    reduce(highest.data(), count, MPI_MAX, group);
  } else {
    for (size_t i = 0; i < trainable.size(); ++i) {
      const auto& shard = trainable[i]->shard;
      const parallel::Communicator& over = shard.split() ? shard.replicas : group;
      reduce(&lowest[i], 1, MPI_MIN, over);
      reduce(&highest[i], 1, MPI_MAX, over);
    }
  }
  size_t differing = 0, first = 0;
  for (size_t i = trainable.size(); i-- > 0;)
    if (lowest[i] != highest[i]) {
      ++differing;
      first = i;
    }
  if (differing == 0) return;
  auto hex = [](uint64_t x) { return format("0x%016llx", static_cast<unsigned long long>(x)); };
  throw parallel::DistError("model replicas differ after step " + std::to_string(step) + ": parameter '" +
                            trainable[first]->name + "' is not bit-identical on the " + std::to_string(group.size()) +
                            " ranks that hold replicas (rank " + std::to_string(group.rank()) + " has fingerprint " +
                            hex(mine[first]) + ", the ranks range from " + hex(lowest[first]) + " to " +
                            hex(highest[first]) + "); " + std::to_string(differing) + " of " +
                            std::to_string(trainable.size()) + " parameters differ");
}

}  // namespace tessera::train
