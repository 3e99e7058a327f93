#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/kokkos_compat.hpp"

namespace tessera {

/// A flat buffer of segments laid end to end (a model's parameter tensors in its one parameter
/// buffer), cut into chunks of at most kChunk elements that never straddle two segments.
/// Per-segment sums are taken chunk by chunk, each chunk serially in element order and the
/// chunks of a segment added on the host in chunk order: the same bits whatever the thread
/// count (so replicas that must agree do), while a large segment still spreads over many
/// threads. Adasum's per-tensor dot products and the layer-wise optimizers' per-tensor norms
/// both use it.
class SegmentChunks {
 public:
  // Small enough that a GPU gets thousands of chunks to reduce in parallel, large enough that
  // the per-chunk partial sums stay a small host copy.
  static constexpr int64_t kChunk = 2048;

  SegmentChunks() = default;
  /// `offsets`: 0, the start of every further segment, then the buffer's size, never
  /// decreasing (a segment may be empty). Throws Error naming `owner` otherwise.
  SegmentChunks(const std::vector<int64_t>& offsets, const std::string& owner);

  int64_t segments() const { return offsets_.empty() ? 0 : static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t chunks() const { return static_cast<int64_t>(host_segment_.size()); }
  /// Elements in all segments.
  int64_t size() const { return offsets_.empty() ? 0 : offsets_.back(); }
  const std::vector<int64_t>& offsets() const { return offsets_; }

  /// For every segment s, the sums over its elements i of the K values that f(i, s, v) writes
  /// into v[0], ..., v[K − 1]. `f` is a KOKKOS_LAMBDA.
  template <int K, class F>
  std::vector<std::array<double, K>> sums(const char* label, const F& f);
  /// f(i, s) for every element i of every segment s, in parallel. `f` is a KOKKOS_LAMBDA.
  template <class F>
  void for_each(const char* label, const F& f) const;

 private:
  std::vector<int64_t> offsets_;
  // Chunk c covers [begin_(c), begin_(c + 1)) inside segment segment_(c).
  DeviceView<int64_t> begin_;
  DeviceView<int32_t> segment_;
  std::vector<int32_t> host_segment_;
  Matrix<double> partials_;  // per chunk, K sums (allocated for the largest K asked so far)
  Matrix<double>::HostMirror host_partials_;
};

template <int K, class F>
std::vector<std::array<double, K>> SegmentChunks::sums(const char* label, const F& f) {
  std::vector<std::array<double, K>> out(static_cast<size_t>(segments()));
  for (auto& s : out) s.fill(0.0);
  const int64_t n = chunks();
  if (n == 0) return out;
  if (partials_.extent(1) < static_cast<size_t>(K) || partials_.extent(0) != static_cast<size_t>(n)) {
    partials_ = Matrix<double>("tessera::segment_partials", n, K);
    host_partials_ = Kokkos::create_mirror_view(partials_);
  }
  const auto begin = begin_;
  const auto segment = segment_;
  const auto partials = partials_;
  Kokkos::parallel_for(
      label, RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t c) {
        double acc[K] = {};
        double v[K];
        const int s = segment(c);
        for (int64_t i = begin(c); i < begin(c + 1); ++i) {
          f(i, s, v);
          for (int k = 0; k < K; ++k) acc[k] += v[k];
        }
        for (int k = 0; k < K; ++k) partials(c, k) = acc[k];
      });
  Kokkos::deep_copy(host_partials_, partials_);
  for (int64_t c = 0; c < n; ++c)
    for (int k = 0; k < K; ++k)
      out[static_cast<size_t>(host_segment_[static_cast<size_t>(c)])][static_cast<size_t>(k)] += host_partials_(c, k);
  return out;
}

template <class F>
void SegmentChunks::for_each(const char* label, const F& f) const {
  const int64_t n = chunks();
  if (n == 0) return;
  const auto begin = begin_;
  const auto segment = segment_;
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      label, Kokkos::TeamPolicy<ExecSpace>(static_cast<int>(n), Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        const int64_t c = team.league_rank();
        const int s = segment(c);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin(c), begin(c + 1)), [&](const int64_t i) { f(i, s); });
      });
}

}  // namespace tessera
