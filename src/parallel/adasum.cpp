#include "tessera/parallel/adasum.hpp"

#include <algorithm>
#include <limits>

namespace tessera::parallel {
namespace {

// Small enough that a GPU gets thousands of chunks to reduce in parallel, large enough that
// the per-chunk partial sums stay a small host copy.
constexpr int64_t kChunk = 2048;

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

AdasumWeights adasum_weights(double dot, double norm_a_squared, double norm_b_squared) {
  AdasumWeights w;
  if (norm_a_squared > 0.0) w.a = 1.0 - dot / (2.0 * norm_a_squared);
  if (norm_b_squared > 0.0) w.b = 1.0 - dot / (2.0 * norm_b_squared);
  return w;
}

Adasum::Adasum(Communicator group, std::vector<int64_t> segment_offsets, const std::string& where)
    : group_(std::move(group)), offsets_(std::move(segment_offsets)) {
  if (!is_power_of_two(group_.size()))
    throw ConfigError(where, "adasum combines ranks in pairs and needs a power-of-two number of ranks, the group has " +
                                 std::to_string(group_.size()));
  if (offsets_.empty() || offsets_.front() != 0) throw Error("adasum: segment offsets must start at 0");
  for (size_t s = 1; s < offsets_.size(); ++s)
    if (offsets_[s] < offsets_[s - 1])
      throw Error("adasum: segment offsets decrease at segment " + std::to_string(s) + " (" +
                  std::to_string(offsets_[s - 1]) + " then " + std::to_string(offsets_[s]) + ")");
  const size_t segments = offsets_.size() - 1;
  if (segments > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw Error("adasum: " + std::to_string(segments) + " segments are too many");
  std::vector<int64_t> begins;
  for (size_t s = 0; s < segments; ++s)
    for (int64_t b = offsets_[s]; b < offsets_[s + 1]; b += kChunk) {
      begins.push_back(b);
      host_chunk_segment_.push_back(static_cast<int32_t>(s));
    }
  const auto chunks = static_cast<int64_t>(begins.size());
  begins.push_back(offsets_.back());
  chunk_begin_ = DeviceView<int64_t>("tessera::adasum_chunk_begin", begins.size());
  chunk_segment_ = DeviceView<int32_t>("tessera::adasum_chunk_segment", host_chunk_segment_.size());
  Kokkos::deep_copy(chunk_begin_, Kokkos::View<const int64_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                      begins.data(), begins.size()));
  Kokkos::deep_copy(chunk_segment_, Kokkos::View<const int32_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                        host_chunk_segment_.data(), host_chunk_segment_.size()));
  partials_ = Matrix<double>("tessera::adasum_partials", chunks, 3);
  host_partials_ = Kokkos::create_mirror_view(partials_);
  weights_ = Matrix<double>("tessera::adasum_weights", segments, 2);
  host_weights_ = Kokkos::create_mirror_view(weights_);
  if (!group_.is_serial()) partner_ = Tensor(Shape{size()}, "tessera::adasum_partner");
}

void Adasum::combine(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.numel() != size() || b.numel() != size() || out.numel() != size())
    throw ShapeError("adasum: buffers of " + std::to_string(a.numel()) + ", " + std::to_string(b.numel()) + " and " +
                     std::to_string(out.numel()) + " elements, expected " + std::to_string(size()));
  const auto chunks = static_cast<int64_t>(host_chunk_segment_.size());
  if (chunks == 0) return;
  const auto av = a.view(), bv = b.view(), ov = out.view();
  const auto begin = chunk_begin_;
  const auto partials = partials_;
  // Each chunk is summed serially in element order, and the chunks of a segment are added on
  // the host in chunk order: the same bits on every rank whatever its thread count.
  Kokkos::parallel_for(
      "tessera::adasum_partial_dots", RangePolicy(0, chunks), KOKKOS_LAMBDA(const int64_t c) {
        double ab = 0.0, aa = 0.0, bb = 0.0;
        for (int64_t i = begin(c); i < begin(c + 1); ++i) {
          const double x = av(i), y = bv(i);
          ab += x * y;
          aa += x * x;
          bb += y * y;
        }
        partials(c, 0) = ab;
        partials(c, 1) = aa;
        partials(c, 2) = bb;
      });
  Kokkos::deep_copy(host_partials_, partials_);
  const size_t segments = offsets_.size() - 1;
  std::vector<double> dot(segments, 0.0), norm_a(segments, 0.0), norm_b(segments, 0.0);
  for (int64_t c = 0; c < chunks; ++c) {
    const auto s = static_cast<size_t>(host_chunk_segment_[static_cast<size_t>(c)]);
    dot[s] += host_partials_(c, 0);
    norm_a[s] += host_partials_(c, 1);
    norm_b[s] += host_partials_(c, 2);
  }
  for (size_t s = 0; s < segments; ++s) {
    const AdasumWeights w = adasum_weights(dot[s], norm_a[s], norm_b[s]);
    host_weights_(s, 0) = w.a;
    host_weights_(s, 1) = w.b;
  }
  Kokkos::deep_copy(weights_, host_weights_);
  const auto segment = chunk_segment_;
  const auto weights = weights_;
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "tessera::adasum_combine", Kokkos::TeamPolicy<ExecSpace>(static_cast<int>(chunks), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const int64_t c = team.league_rank();
        const int s = segment(c);
        const double wa = weights(s, 0), wb = weights(s, 1);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin(c), begin(c + 1)), [&](const int64_t i) {
          ov(i) = static_cast<float>(wa * static_cast<double>(av(i)) + wb * static_cast<double>(bv(i)));
        });
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
