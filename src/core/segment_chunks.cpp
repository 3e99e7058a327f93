#include "tessera/core/segment_chunks.hpp"

#include <limits>

#include "tessera/core/error.hpp"

namespace tessera {

SegmentChunks::SegmentChunks(const std::vector<int64_t>& offsets, const std::string& owner) : offsets_(offsets) {
  if (offsets_.empty() || offsets_.front() != 0) throw Error(owner + ": segment offsets must start at 0");
  for (size_t s = 1; s < offsets_.size(); ++s)
    if (offsets_[s] < offsets_[s - 1])
      throw Error(owner + ": segment offsets decrease at segment " + std::to_string(s) + " (" +
                  std::to_string(offsets_[s - 1]) + " then " + std::to_string(offsets_[s]) + ")");
  const size_t segments = offsets_.size() - 1;
  if (segments > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw Error(owner + ": " + std::to_string(segments) + " segments are too many");
  std::vector<int64_t> begins;
  for (size_t s = 0; s < segments; ++s)
    for (int64_t b = offsets_[s]; b < offsets_[s + 1]; b += kChunk) {
      begins.push_back(b);
      host_segment_.push_back(static_cast<int32_t>(s));
    }
  begins.push_back(offsets_.back());
  begin_ = DeviceView<int64_t>("tessera::segment_chunk_begin", begins.size());
  segment_ = DeviceView<int32_t>("tessera::segment_chunk_segment", host_segment_.size());
  using HostInt64 = Kokkos::View<const int64_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostInt32 = Kokkos::View<const int32_t*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::deep_copy(begin_, HostInt64(begins.data(), begins.size()));
  Kokkos::deep_copy(segment_, HostInt32(host_segment_.data(), host_segment_.size()));
}

}  // namespace tessera
