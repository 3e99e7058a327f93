#include "tessera/parallel/adasum.hpp"

#include <algorithm>
#include <limits>

namespace tessera::parallel {
namespace {

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

AdasumWeights adasum_weights(double dot, double norm_a_squared, double norm_b_squared) {
  AdasumWeights w;
  if (norm_a_squared > 0.0) w.a = 1.0 - dot / (2.0 * norm_a_squared);
  if (norm_b_squared > 0.0) w.b = 1.0 - dot / (2.0 * norm_b_squared);
  return w;
}

Adasum::Adasum(Communicator group, std::vector<int64_t> segment_offsets, const std::string& where)
    : group_(std::move(group)), chunks_(segment_offsets, "adasum") {
  if (!is_power_of_two(group_.size()))
    throw ConfigError(where, "adasum combines ranks in pairs and needs a power-of-two number of ranks, the group has " +
                                 std::to_string(group_.size()));
  weights_ = Matrix<double>("tessera::adasum_weights", chunks_.segments(), 2);
  host_weights_ = Kokkos::create_mirror_view(weights_);
  if (!group_.is_serial()) partner_ = Tensor(Shape{size()}, "tessera::adasum_partner");
}

void Adasum::combine(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.numel() != size() || b.numel() != size() || out.numel() != size())
    throw ShapeError("adasum: buffers of " + std::to_string(a.numel()) + ", " + std::to_string(b.numel()) + " and " +
                     std::to_string(out.numel()) + " elements, expected " + std::to_string(size()));
  if (chunks_.chunks() == 0) return;
  const auto av = a.view(), bv = b.view(), ov = out.view();
  // Summed in a fixed order (SegmentChunks): the same bits on every rank whatever its thread count.
  const auto sums = chunks_.sums<3>(
      "tessera::adasum_partial_dots", KOKKOS_LAMBDA(const int64_t i, const int, double* v) {
        const double x = av(i), y = bv(i);
        v[0] = x * y;
        v[1] = x * x;
        v[2] = y * y;
      });
  for (size_t s = 0; s < sums.size(); ++s) {
    const AdasumWeights w = adasum_weights(sums[s][0], sums[s][1], sums[s][2]);
    host_weights_(s, 0) = w.a;
    host_weights_(s, 1) = w.b;
  }
  Kokkos::deep_copy(weights_, host_weights_);
  const auto weights = weights_;
  chunks_.for_each(
      "tessera::adasum_combine", KOKKOS_LAMBDA(const int64_t i, const int s) {
        ov(i) = static_cast<float>(weights(s, 0) * static_cast<double>(av(i)) +
                                   weights(s, 1) * static_cast<double>(bv(i)));
      });
  Kokkos::fence();
}

void Adasum::exchange(const Tensor& data, int partner) {
  const int64_t n = size();
  constexpr int64_t piece = std::numeric_limits<int>::max() / 2;
  constexpr int tag = 0x4144;  // "AD"; MPI guarantees tags up to 32767 only
  auto sendrecv = [&](const float* send, float* recv) {
    for (int64_t offset = 0; offset < n; offset += piece) {
      const int count = static_cast<int>(std::min(piece, n - offset));
      check_mpi(MPI_Sendrecv(send + offset, count, MPI_FLOAT, partner, tag, recv + offset, count, MPI_FLOAT, partner,
                             tag, group_.handle(), MPI_STATUS_IGNORE),
                "MPI_Sendrecv (adasum)");
    }
  };
  Kokkos::fence();
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    sendrecv(data.data(), partner_.data());
  } else {
    // Without a CUDA-aware MPI the device buffers go through host copies.
    if (send_host_.extent(0) != static_cast<size_t>(n)) {
      send_host_ = Kokkos::View<float*, HostSpace>("tessera::adasum_send", n);
      recv_host_ = Kokkos::View<float*, HostSpace>("tessera::adasum_recv", n);
    }
    Kokkos::deep_copy(send_host_, data.view());
    sendrecv(send_host_.data(), recv_host_.data());
    Kokkos::deep_copy(partner_.view(), recv_host_);
  }
}

void Adasum::allreduce(const Tensor& data) {
  if (data.numel() != size())
    throw ShapeError("adasum: a buffer of " + std::to_string(data.numel()) + " elements, expected " +
                     std::to_string(size()));
  const int rank = group_.rank();
  for (int distance = 1; distance < group_.size(); distance *= 2) {
    const int partner = rank ^ distance;
    exchange(data, partner);
    // Both partners evaluate the rule with the lower rank's vector first, so both compute the
    // very same expression on the same inputs.
    if (rank < partner)
      combine(data, partner_, data);
    else
      combine(partner_, data, data);
  }
}

}  // namespace tessera::parallel
